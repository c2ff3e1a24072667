// A stdio MCP server for the tests, plain JavaScript so it starts without a TypeScript loader.
// The same tools as mcp-tools.ts; MCP_CALLS_FILE counts post_message calls.
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'flowmend-test-stdio', version: '1.0.0' });
server.registerTool('post_message', { inputSchema: { channel: z.string(), text: z.string() } }, async ({ channel, text }) => {
  if (process.env.MCP_CALLS_FILE) appendFileSync(process.env.MCP_CALLS_FILE, `${channel}:${text}\n`);
  if (channel === 'missing') return { isError: true, content: [{ type: 'text', text: 'channel_not_found' }] };
  return { content: [{ type: 'text', text: JSON.stringify({ ok: true, channel }) }] };
});
server.registerTool('add', { inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
await server.connect(new StdioServerTransport());
