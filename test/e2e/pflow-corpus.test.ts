import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAnthropicLlmClient } from '../../functions/adapters/anthropic-llm-client.ts';
import { makeMcpTools } from '../../functions/adapters/mcp-tools.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { makeCatalog } from '../../functions/core/node-type.ts';
import { prepareRun } from '../../functions/core/prepare-run.ts';
import { loadMcpConfig } from '../../functions/hosts/cli/mcp-config.ts';
import { loadWorkflowFile } from '../../functions/hosts/cli/workflow-file.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { fileRunners } from '../../functions/nodes/catalog.ts';
import { httpRunner } from '../../functions/nodes/http.ts';
import { makeLlmRunner } from '../../functions/nodes/llm.ts';
import { makeMcpRunner } from '../../functions/nodes/mcp.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';
import { type McpHttpTestServer, startMcpHttpServer } from '../support/mcp-http-server.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/pflow');
// A 1x1 PNG, as a workspace file for the llm node's images.
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let dir: string;
let http: HttpTestServer;
let fake: FakeAnthropic;
let mcp: McpHttpTestServer;
let mcpConfigPath: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'flowmend-pflow-'));
  [http, fake, mcp] = await Promise.all([startHttpTestServer(), startFakeAnthropic(), startMcpHttpServer(join(dir, 'mcp-calls'))]);
  writeFileSync(join(dir, 'pixel.png'), PIXEL);
  // pflow's mcp-servers.json shape, read as is.
  mcpConfigPath = join(dir, 'mcp-servers.json');
  writeFileSync(
    mcpConfigPath,
    JSON.stringify({ mcpServers: { chat: { type: 'http', url: mcp.url, headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } } } }),
  );
});
afterAll(async () => {
  await Promise.all([http.close(), fake.close(), mcp.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const runners = () => [
  shellRunner,
  transformRunner,
  httpRunner,
  ...fileRunners,
  makeLlmRunner({ config: () => ({ apiKey: 'test-key', baseURL: fake.baseURL }), client: makeAnthropicLlmClient() }),
  makeMcpRunner({ tools: makeMcpTools({ env: { MCP_TEST_TOKEN: 't0k' }, allowStdio: true }) }),
];

/** Loads a fixture as `flowmend run` does (its MCP config too) and runs it through the local host. */
const runFixture = async (name: string, params: Record<string, unknown> = {}) => {
  const config = await loadMcpConfig(mcpConfigPath);
  if (!config.ok) throw new Error(JSON.stringify(config.issues));
  const loaded = await loadWorkflowFile(join(FIXTURES, name), { mcpServers: config.servers });
  if (!loaded.ok) throw new Error(`${name}: ${JSON.stringify(loaded.issues)}`);
  const list = runners();
  const prepared = prepareRun({ workflow: loaded.workflow, workflowName: loaded.name, params, repairEnabled: false, maxRepairs: 0 }, makeCatalog(list));
  if (!prepared.ok) throw new Error(`${name}: ${prepared.message}`);
  const report = await new LocalHost({ store: new MemoryRunStore(), runners: list, retryIntervalMs: 0 }).start({ ...prepared.spec, workspace: dir });
  return { report, issues: prepared.spec.issues, workflow: loaded.workflow };
};

describe('pflow-style workflows run unchanged through the local host', () => {
  it('covers every fixture', () => {
    expect(readdirSync(FIXTURES).sort()).toEqual(['files.json', 'http.json', 'legacy-outputs.json', 'llm-images.json', 'mcp.json', 'saved-workflow.json']);
  });

  it('a saved workflow: the IR under "ir", name and description from the wrapper', async () => {
    const { report, workflow } = await runFixture('saved-workflow.json');
    expect(workflow).toMatchObject({ name: 'greet', description: expect.stringContaining('Greets') });
    expect(report).toMatchObject({ status: 'succeeded', result: { greeting: 'hello world' } });
  });

  it('an output without source is the key of that name from the last node that wrote it, with a warning', async () => {
    const { report, issues } = await runFixture('legacy-outputs.json');
    expect(issues).toContainEqual(
      expect.objectContaining({ code: 'OUTPUT_WITHOUT_SOURCE', severity: 'warning', message: expect.stringContaining('${second.stdout}') }),
    );
    expect(report).toMatchObject({ status: 'succeeded', result: { stdout: 'second' } });
  });

  it('file nodes with pflow params', async () => {
    const { report } = await runFixture('files.json', { title: 'Weekly' });
    expect(report).toMatchObject({ status: 'succeeded', result: { report: '# Weekly\ndone\n', copied: true } });
    expect(readFileSync(join(dir, 'out/report.md'), 'utf8')).toBe('# Weekly\ndone\n');
  });

  it("http with pflow's params, auth_token and POST by default when a body is given", async () => {
    const { report } = await runFixture('http.json', { base_url: http.url, token: 's3cret' });
    expect(report).toMatchObject({ status: 'succeeded', result: { method: 'POST', q: '1', auth: 'Bearer s3cret', sent: 'hi' } });
  });

  it('llm images: a URL and a workspace file, sent as image blocks', async () => {
    fake.enqueue({ text: 'a pixel' });
    const { report } = await runFixture('llm-images.json', { image_url: 'https://example.com/cat.png' });
    expect(report).toMatchObject({ status: 'succeeded', result: { answer: 'a pixel' } });
    const content = (fake.calls.at(-1)?.body.messages as { content: unknown }[] | undefined)?.[0]?.content;
    expect(content).toEqual([
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PIXEL.toString('base64') } },
      { type: 'text', text: 'What do these show?' },
    ]);
  });

  it('mcp-<server>-<tool> nodes with the server from an mcp-servers.json file', async () => {
    const { report, workflow } = await runFixture('mcp.json');
    expect(report).toMatchObject({ status: 'succeeded', result: { ts: '1700000000.000100', total: '5' } });
    expect(workflow.nodes[0]).toMatchObject({
      type: 'mcp',
      params: { server: 'chat', tool: 'post_message', arguments: { channel: 'general', text: '${message}' } },
    });
    expect(workflow.mcp_servers?.chat).toMatchObject({ headers: { Authorization: 'Bearer ${MCP_TEST_TOKEN}' } });
  });
});
