import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeMcpTools } from '../../functions/adapters/mcp-tools.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { parseWorkflow, validateWorkflow } from '../../functions/core/validate.ts';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';
import { makeMcpRunner } from '../../functions/nodes/mcp.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type McpHttpTestServer, startMcpHttpServer } from '../support/mcp-http-server.ts';

let dir: string;
let callsFile: string;
let mcp: McpHttpTestServer;
let fake: FakeAnthropic;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowmend-mcp-'));
  callsFile = join(dir, 'calls');
  [mcp, fake] = await Promise.all([startMcpHttpServer(callsFile), startFakeAnthropic()]);
});
afterAll(async () => {
  await Promise.all([mcp.close(), fake.close()]);
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(() => {
  rmSync(callsFile, { force: true });
  fake.calls.length = 0;
});
afterEach(() => expect(fake.pending()).toBe(0));

const calls = (): string[] => {
  try {
    return readFileSync(callsFile, 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
};

const env = { MCP_TEST_TOKEN: 't0k', ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: '' };
const host = () => {
  const h = new LocalHost({
    store: new MemoryRunStore(),
    runners: [makeMcpRunner({ tools: makeMcpTools({ env, allowStdio: true }) }), shellRunner],
    retryIntervalMs: 0,
    makeRepairHandler: envRepairHandler({ ...env, ANTHROPIC_BASE_URL: fake.baseURL }),
  });
  return h;
};

const httpServer = () => ({ chat: { type: 'http', url: mcp.url, headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } } });
const stdioServer = () => ({
  local: { command: process.execPath, args: [join(import.meta.dirname, '../support/mcp-stdio-server.mjs')], env: { MCP_CALLS_FILE: callsFile } },
});

const run = (h: LocalHost, raw: unknown) => {
  const parsed = parseWorkflow(raw);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return h.start({ workflow: parsed.workflow, workflowName: 'mcp', params: {}, repairEnabled: true, maxRepairs: 2 });
};

const postThenEcho = (channel: string, extra: { edges?: unknown[]; nodes?: unknown[] } = {}) => ({
  mcp_servers: httpServer(),
  nodes: [
    { id: 'post', type: 'mcp-chat-post_message', params: { channel, text: 'hello' } },
    { id: 'after', type: 'shell', params: { command: 'echo posted ${post.result.ts}' } },
    ...(extra.nodes ?? []),
  ],
  edges: [{ from: 'post', to: 'after' }, ...(extra.edges ?? [])],
});

describe('mcp node through the local host', () => {
  it('calls a tool over Streamable HTTP by its pflow name, with the token read from the environment', async () => {
    const report = await run(host(), postThenEcho('general'));
    expect(report.status).toBe('succeeded');
    expect(report.result).toMatchObject({ stdout: 'posted 1700000000.000100' });
    expect(calls()).toEqual(['general:hello']);
    expect(mcp.authorizations).toContain('Bearer t0k');
  });

  it('calls a tool of a stdio server and returns its text as result', async () => {
    const report = await run(host(), {
      mcp_servers: stdioServer(),
      nodes: [{ id: 'sum', type: 'mcp', side_effects: false, params: { server: 'local', tool: 'add', arguments: { a: 2, b: 3 } } }],
      outputs: { total: { source: '${sum.result}' } },
    });
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ total: '5' });
  });

  it('stops on isError "channel_not_found" with a warning and no repair', async () => {
    const report = await run(host(), postThenEcho('missing'));
    expect(report.status).toBe('failed');
    expect(report.warnings).toContainEqual(
      expect.objectContaining({ node_id: 'post', category: 'non_repairable', message: 'API error: channel_not_found', fixable: false }),
    );
    expect(report.steps.map((s) => s.node_id)).toEqual(['post']);
    expect(fake.calls).toHaveLength(0);
  });

  it('routes an isError warning along an error edge', async () => {
    const report = await run(
      host(),
      postThenEcho('missing', {
        nodes: [{ id: 'alert', type: 'shell', params: { command: 'echo handled' } }],
        edges: [{ from: 'post', to: 'alert', action: 'error' }],
      }),
    );
    expect(report.status).toBe('succeeded');
    expect(report.steps.map((s) => s.node_id)).toEqual(['post', 'alert']);
  });

  it('repairs bad arguments with the tool input schema in the prompt, and calls the tool once', async () => {
    const workflow = {
      mcp_servers: httpServer(),
      nodes: [{ id: 'post', type: 'mcp', params: { server: 'chat', tool: 'post_message', arguments: { channel: 'general', txt: 'hi' } } }],
    };
    const fixed = structuredClone(workflow);
    (fixed.nodes[0] as { params: { arguments: Record<string, unknown> } }).params.arguments = { channel: 'general', text: 'hi' };
    fake.enqueue({ text: JSON.stringify({ workflow: fixed, reason: 'The tool takes "text", not "txt".' }) });
    const report = await run(host(), workflow);
    expect(report.status).toBe('succeeded');
    expect(report.repairs).toHaveLength(1);
    expect(calls()).toEqual(['general:hi']);
    const prompt = JSON.stringify(fake.calls[0]?.body.messages);
    expect(prompt).toContain('Input schema of the tool');
    expect(prompt).toContain('\\"text\\"');
  });

  it('repairs a typo in a tool name: a repairable error naming the tools the server has, not a missing resource', async () => {
    const workflow = {
      mcp_servers: httpServer(),
      nodes: [{ id: 'post', type: 'mcp', params: { server: 'chat', tool: 'post_mesage', arguments: { channel: 'general', text: 'hi' } } }],
    };
    const fixed = { ...workflow, nodes: [{ ...workflow.nodes[0], params: { ...workflow.nodes[0]?.params, tool: 'post_message' } }] };
    fake.enqueue({ text: JSON.stringify({ workflow: fixed, reason: 'The tool is post_message.' }) });
    const report = await run(host(), workflow);
    expect(report.status).toBe('succeeded');
    expect(report.warnings).toEqual([]);
    expect(report.repairs).toHaveLength(1);
    expect(calls()).toEqual(['general:hi']);
    const prompt = JSON.stringify(fake.calls[0]?.body.messages);
    expect(prompt).toContain('MCP_UNKNOWN_TOOL');
    expect(prompt).toContain("did you mean 'post_message'?");
  });

  it('retries a refused connection, then fails without repair', async () => {
    const h = host();
    const report = await run(h, {
      mcp_servers: { chat: { type: 'http', url: 'http://127.0.0.1:9/mcp' } },
      nodes: [{ id: 'post', type: 'mcp-chat-post_message', params: { channel: 'general', text: 'x' } }],
    });
    expect(report.status).toBe('failed');
    expect(report.errors[0]).toMatchObject({ node_id: 'post', category: 'transient', fixable: false });
    expect(report.errors[0]?.message).toMatch(/ECONNREFUSED|connection/i);
    expect(h.stats.tasks.RunMcp).toBe(4);
    expect(fake.calls).toHaveLength(0);
  });

  it('fails a run that names an unconfigured server before any node runs; validate warns', async () => {
    const raw = {
      nodes: [
        { id: 'first', type: 'shell', params: { command: 'echo never' } },
        { id: 'post', type: 'mcp-slack-post_message', params: { channel: 'c', text: 't' } },
      ],
      edges: [{ from: 'first', to: 'post' }],
    };
    const parsed = parseWorkflow(raw);
    if (!parsed.ok) throw new Error('parse');
    expect(validateWorkflow(parsed.workflow, builtinCatalog)).toContainEqual(
      expect.objectContaining({ code: 'MCP_SERVER_NOT_CONFIGURED', severity: 'warning', message: expect.stringContaining("'slack'") }),
    );
    const report = await run(host(), raw);
    expect(report.status).toBe('failed');
    expect(report.steps).toHaveLength(0);
    expect(report.errors[0]).toMatchObject({ code: 'MCP_SERVER_NOT_CONFIGURED', fixable: false, message: expect.stringContaining("'slack'") });
  });

  it('validate --online lists the tools and checks arguments against their input schema', async () => {
    const file = join(dir, 'online.json');
    const config = join(dir, 'mcp-servers.json');
    writeFileSync(config, JSON.stringify({ mcpServers: httpServer() }));
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [
          { id: 'ok', type: 'mcp-chat-post_message', params: { channel: 'general', text: 'hi' } },
          { id: 'typo', type: 'mcp-chat-post_mesage', params: { channel: 'general', text: 'hi' } },
          { id: 'bad', type: 'mcp-chat-add', params: { a: 'two', b: 3 } },
        ],
        edges: [
          { from: 'ok', to: 'typo' },
          { from: 'typo', to: 'bad' },
        ],
      }),
    );
    let stdout = '';
    const code = await runCli(['validate', file, '--online', '--mcp-config', config, '--output-format', 'json'], {
      stdout: (t) => (stdout += t),
      stderr: () => {},
      env,
    });
    const result = JSON.parse(stdout) as { valid: boolean; issues: { code: string; path: string; hint?: string }[] };
    expect(code).toBe(2);
    expect(result.valid).toBe(false);
    expect(result.issues).toContainEqual(
      expect.objectContaining({ code: 'MCP_UNKNOWN_TOOL', path: 'nodes[1].params.tool', hint: expect.stringContaining('post_message') }),
    );
    expect(result.issues).toContainEqual(expect.objectContaining({ code: 'MCP_INVALID_ARGUMENTS', path: 'nodes[2].params.arguments.a' }));
    expect(result.issues.filter((i) => i.path.startsWith('nodes[0]'))).toEqual([]);
    expect(calls()).toEqual([]);
  });
});
