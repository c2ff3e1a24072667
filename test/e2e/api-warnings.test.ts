import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAnthropicLlmClient } from '../../functions/adapters/anthropic-llm-client.ts';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { httpRunner } from '../../functions/nodes/http.ts';
import { makeLlmRunner } from '../../functions/nodes/llm.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';

let server: HttpTestServer;
let fake: FakeAnthropic;

beforeAll(async () => {
  [server, fake] = await Promise.all([startHttpTestServer(), startFakeAnthropic()]);
});
afterAll(() => Promise.all([server.close(), fake.close()]));

const hostWithRepairCounter = () => {
  const repairs: unknown[] = [];
  const host = new LocalHost({
    store: new MemoryRunStore(),
    runners: [httpRunner, shellRunner, makeLlmRunner({ config: () => ({ apiKey: 'test-key', baseURL: fake.baseURL }), client: makeAnthropicLlmClient() })],
    retryIntervalMs: 0,
    makeRepairHandler: () => async (event) => {
      repairs.push(event);
      return { applied: false, message: 'test repairer declines' };
    },
  });
  return { host, repairs };
};

const start = (host: LocalHost, workflow: WorkflowInput) =>
  host.start({ workflow: WorkflowSchema.parse(workflow), workflowName: 'api-warnings', params: {}, repairEnabled: true, maxRepairs: 3 });

const callThenEcho = (url: string, extraEdges: WorkflowInput['edges'] = [], extraNodes: WorkflowInput['nodes'] = []): WorkflowInput => ({
  nodes: [{ id: 'call', type: 'http', params: { url } }, { id: 'after', type: 'shell', params: { command: 'echo downstream' } }, ...extraNodes],
  edges: [{ from: 'call', to: 'after', action: 'default' }, ...extraEdges],
});

const slackError = () => `${server.url}/json?body=${encodeURIComponent(JSON.stringify({ ok: false, error: 'channel_not_found' }))}`;

describe('API warnings through the local host', () => {
  it('stops the run on a 200 {"ok":false,"error":"channel_not_found"} with a warning, no repair and nothing downstream', async () => {
    const { host, repairs } = hostWithRepairCounter();
    const report = await start(host, callThenEcho(slackError()));
    expect(report.status).toBe('failed');
    expect(report.success).toBe(false);
    expect(report.warnings).toContainEqual(
      expect.objectContaining({ node_id: 'call', category: 'non_repairable', message: 'API error: channel_not_found', fixable: false }),
    );
    expect(report.errors).toContainEqual(expect.objectContaining({ node_id: 'call', fixable: false }));
    expect(report.steps.map((s) => s.node_id)).toEqual(['call']);
    expect(report.steps[0]).toMatchObject({ status: 'warning', action: 'error' });
    expect(repairs).toHaveLength(0);
  });

  it('routes a warning along an error edge to the handler node, and the run goes on', async () => {
    const { host, repairs } = hostWithRepairCounter();
    const workflow = callThenEcho(
      slackError(),
      [{ from: 'call', to: 'handler', action: 'error' }],
      [{ id: 'handler', type: 'shell', params: { command: 'echo handled' } }],
    );
    const report = await start(host, workflow);
    expect(report.steps.map((s) => s.node_id)).toEqual(['call', 'handler']);
    expect(report.steps[1]).toMatchObject({ status: 'completed' });
    expect(report.warnings).toContainEqual(expect.objectContaining({ node_id: 'call', message: 'API error: channel_not_found' }));
    expect(report.status).toBe('succeeded');
    expect(repairs).toHaveLength(0);
  });

  it('stops on HTTP 404 as a non-repairable warning', async () => {
    const { host, repairs } = hostWithRepairCounter();
    const report = await start(host, callThenEcho(`${server.url}/status/404`));
    expect(report.status).toBe('failed');
    expect(report.warnings).toContainEqual(
      expect.objectContaining({ node_id: 'call', category: 'non_repairable', fixable: false, message: expect.stringMatching(/^HTTP 404 Not Found/) }),
    );
    expect(repairs).toHaveLength(0);
  });

  it('retries a 503 with the state machine policy, then fails as transient without repair', async () => {
    const { host, repairs } = hostWithRepairCounter();
    server.route('/flaky', { status: 503, body: { error: 'down' } });
    const before = server.requests.filter((r) => r.url === '/flaky').length;
    const report = await start(host, callThenEcho(`${server.url}/flaky`));
    expect(server.requests.filter((r) => r.url === '/flaky').length - before).toBe(4);
    expect(report.status).toBe('failed');
    expect(report.errors).toContainEqual(expect.objectContaining({ node_id: 'call', category: 'transient', fixable: false }));
    expect(repairs).toHaveLength(0);
  });

  it('adds llm tokens and cost to the run metrics', async () => {
    const { host } = hostWithRepairCounter();
    fake.enqueue({ text: 'hello', usage: { input_tokens: 2000, output_tokens: 1000 } });
    const report = await start(host, { nodes: [{ id: 'ask', type: 'llm', params: { prompt: 'hi', model: 'claude-haiku-4-5' } }] });
    expect(report.status).toBe('succeeded');
    expect(report.metrics.llm).toEqual({ input_tokens: 2000, output_tokens: 1000, cost_usd: 0.007 });
  });
});
