import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from '../../functions/core/zod.ts';

/**
 * The tools of the test MCP servers (Streamable HTTP and stdio), built with the SDK's server side.
 * `post_message` is a side effect: each call appends one line to `callsFile`, so tests can count them.
 * Channel "missing" answers like Slack: `isError: true` with `channel_not_found`.
 */
export const makeTestMcpServer = (callsFile: string | undefined): McpServer => {
  const server = new McpServer({ name: 'flowmend-test', version: '1.0.0' });
  server.registerTool(
    'post_message',
    {
      description: 'Posts a message to a channel',
      inputSchema: { channel: z.string(), text: z.string() },
      outputSchema: { ok: z.boolean(), channel: z.string(), ts: z.string() },
    },
    async ({ channel, text }) => {
      if (callsFile) appendFileSync(callsFile, `${channel}:${text}\n`);
      if (channel === 'missing') return { isError: true, content: [{ type: 'text', text: 'channel_not_found' }] };
      const result = { ok: true, channel, ts: '1700000000.000100' };
      return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result };
    },
  );
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  return server;
};
