import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Workflow, type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { httpRunner } from '../../functions/nodes/http.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { writeWorkflow } from '../support/cli-process.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';

let fake: FakeAnthropic;
let server: HttpTestServer;
let dir: string;

beforeAll(async () => {
  [fake, server] = await Promise.all([startFakeAnthropic(), startHttpTestServer()]);
});
afterAll(() => Promise.all([fake.close(), server.close()]));
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowmend-repair-'));
  fake.calls.length = 0;
});
afterEach(() => {
  expect(fake.pending()).toBe(0);
  rmSync(dir, { recursive: true, force: true });
});

const host = (env: NodeJS.ProcessEnv = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.baseURL }) =>
  new LocalHost({
    store: new MemoryRunStore(),
    runners: [shellRunner, transformRunner, httpRunner],
    retryIntervalMs: 0,
    makeRepairHandler: envRepairHandler(env),
  });

const start = (h: LocalHost, workflow: WorkflowInput, maxRepairs = 3) =>
  h.start({ workflow: WorkflowSchema.parse(workflow), workflowName: 'repair-e2e', params: {}, repairEnabled: true, maxRepairs });

/** Times a node ran, from the lines it appended to its own file (a real side effect). */
const runs = (node: string): number => {
  try {
    return readFileSync(join(dir, node), 'utf8').split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
};
const mark = (node: string): string => `echo run >> '${join(dir, node)}'`;

const propose = (workflow: WorkflowInput, change: (w: Workflow) => void, reason = 'Fixed the failing node.') => {
  const copy = WorkflowSchema.parse(structuredClone(workflow));
  change(copy);
  fake.enqueue({ text: JSON.stringify({ workflow: copy, reason }), usage: { input_tokens: 900, output_tokens: 150 } });
};

const setParam = (w: Workflow, id: string, key: string, value: unknown): void => {
  const node = w.nodes.find((n) => n.id === id);
  if (!node) throw new Error(`no node ${id}`);
  node.params[key] = value;
};

/** fetch (shell, side effects) -> shape (transform, pure) -> use (shell, fails). */
const pipeline = (useCommand: string): WorkflowInput => ({
  nodes: [
    { id: 'fetch', type: 'shell', params: { command: `${mark('fetch')}; echo octocat` } },
    { id: 'shape', type: 'transform', params: { expression: '$uppercase($)', input: '${fetch.stdout}' } },
    { id: 'use', type: 'shell', params: { command: useCommand } },
  ],
  edges: [
    { from: 'fetch', to: 'shape' },
    { from: 'shape', to: 'use' },
  ],
  outputs: { out: { source: '${use.stdout}' } },
});

describe('repair through the local host', () => {
  it('fixes a failing node with 1 LLM call; every upstream node ran exactly once and is replayed', async () => {
    const workflow = pipeline('grep -q nothing /dev/null');
    propose(workflow, (w) => setParam(w, 'use', 'command', 'echo hello ${shape.result}'));
    const report = await start(host(), workflow);
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ out: 'hello OCTOCAT' });
    expect(fake.calls).toHaveLength(1);
    expect(runs('fetch')).toBe(1);
    expect(report.repairs).toEqual([
      expect.objectContaining({ attempt: 1, source: 'llm', reason: 'Fixed the failing node.', nodes_changed: ['use'], tokens: { input: 900, output: 150 } }),
    ]);
    expect(report.metrics.repair).toMatchObject({ input_tokens: 900, output_tokens: 150 });
    const last = (id: string) => report.steps.filter((s) => s.node_id === id).at(-1);
    expect(last('fetch')).toMatchObject({ cached: true });
    expect(last('use')).toMatchObject({ status: 'completed', repaired: true });
    const prompt = JSON.stringify(fake.calls[0]?.body.messages);
    expect(prompt).toContain('fetch (shell, side effects: yes');
    expect(prompt).toContain('${shape.result}');
  });

  it('stops after 1 repair when the same error comes back', async () => {
    const workflow = pipeline('exit 3');
    propose(workflow, (w) => setParam(w, 'use', 'command', 'echo trying; exit 3'));
    const report = await start(host(), workflow);
    expect(report.status).toBe('failed');
    expect(fake.calls).toHaveLength(1);
    expect(report.repairs).toHaveLength(1);
    expect(report.errors[0]?.message).toMatch(/same error came back after repair attempt 1/);
    expect(runs('fetch')).toBe(1);
  });

  it('stops at the limit after three different errors', async () => {
    const workflow = pipeline('exit 1');
    propose(workflow, (w) => setParam(w, 'use', 'command', 'exit 2'));
    propose(workflow, (w) => setParam(w, 'use', 'command', 'exit 4'));
    propose(workflow, (w) => setParam(w, 'use', 'command', 'exit 5'));
    const report = await start(host(), workflow, 3);
    expect(report.status).toBe('failed');
    expect(fake.calls).toHaveLength(3);
    expect(report.repairs.map((r) => r.attempt)).toEqual([1, 2, 3]);
    expect(report.errors[0]?.message).toMatch(/gave up after 3 repair attempt/);
    expect(runs('fetch')).toBe(1);
  });

  it('makes no LLM call for a non-repairable warning', async () => {
    const report = await start(host(), {
      nodes: [
        { id: 'call', type: 'http', params: { url: `${server.url}/status/404` } },
        { id: 'after', type: 'shell', params: { command: 'echo no' } },
      ],
      edges: [{ from: 'call', to: 'after' }],
    });
    expect(report.status).toBe('failed');
    expect(report.errors[0]).toMatchObject({ node_id: 'call', fixable: false });
    expect(fake.calls).toHaveLength(0);
    expect(report.repairs).toHaveLength(0);
  });

  it('refuses a proposal that edits a completed node with side effects, and tells the next attempt why', async () => {
    const workflow = pipeline('exit 1');
    propose(workflow, (w) => setParam(w, 'fetch', 'command', 'echo changed'));
    propose(workflow, (w) => setParam(w, 'fetch', 'command', 'echo changed again'));
    const report = await start(host(), workflow, 2);
    expect(report.status).toBe('failed');
    expect(fake.calls).toHaveLength(2);
    expect(report.errors[0]?.message).toMatch(
      /gave up after 2 repair attempt\(s\); attempt 2 was refused: .*node 'fetch' already ran and has side effects, so it is frozen/s,
    );
    expect(JSON.stringify(fake.calls[1]?.body.messages)).toContain("node 'fetch' already ran and has side effects");
    const frozen = expect.arrayContaining([expect.stringContaining("node 'fetch' already ran and has side effects, so it is frozen")]);
    expect(report.repairs).toEqual([
      expect.objectContaining({ attempt: 1, outcome: 'refused', source: 'llm', problems: frozen, diff: [], tokens: { input: 900, output: 150 } }),
      expect.objectContaining({ attempt: 2, outcome: 'refused', source: 'llm', problems: frozen }),
    ]);
    expect(report.repairs[0]).not.toHaveProperty('version');
    expect(report.metrics.repair).toMatchObject({ input_tokens: 1800, output_tokens: 300 });
    expect(runs('fetch')).toBe(1);
  });

  it('--max-repairs N bounds the LLM calls at N: one call per attempt, each refused proposal fed to the next, every attempt reported', async () => {
    const workflow = pipeline('exit 1');
    fake.enqueue({ text: 'Change the exit code to 0.' });
    propose(workflow, (w) => setParam(w, 'fetch', 'command', 'echo changed'));
    propose(workflow, (w) => setParam(w, 'use', 'command', 'echo fixed'), 'use exits 0.');
    const report = await start(host(), workflow, 3);
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ out: 'fixed' });
    expect(fake.calls).toHaveLength(3);
    const prompts = fake.calls.map((c) => JSON.stringify(c.body.messages));
    expect(prompts[0]).not.toContain('Your previous reply was refused');
    expect(prompts[1]).toContain('the reply is neither a bare JSON object');
    expect(prompts[2]).toContain("node 'fetch' already ran and has side effects");
    expect(prompts[2]).not.toContain('the reply is neither a bare JSON object');
    expect(report.repairs.map((r) => [r.attempt, r.outcome, r.source])).toEqual([
      [1, 'refused', 'llm'],
      [2, 'refused', 'llm'],
      [3, 'applied', 'llm'],
    ]);
    expect(report.repairs[2]).toMatchObject({ version: 1, reason: 'use exits 0.', nodes_changed: ['use'] });
    expect(runs('fetch')).toBe(1);
  });

  it('flowmend run --max-repairs 2 makes at most 2 LLM calls and prints every attempt in its JSON report', async () => {
    const workflow = pipeline('exit 1');
    fake.enqueue({ text: 'Change the exit code to 0.' });
    fake.enqueue({ text: 'Sorry, I cannot.' });
    const env = { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.baseURL };
    let stdout = '';
    const code = await runCli(
      ['run', writeWorkflow(dir, 'capped', workflow), '--max-repairs', '2', '--state-dir', join(dir, 'state'), '--output-format', 'json'],
      {
        stdout: (t) => (stdout += t),
        stderr: () => {},
        env,
        hostOptions: { makeRepairHandler: envRepairHandler(env), retryIntervalMs: 0 },
      },
    );
    expect(code).toBe(1);
    expect(fake.calls).toHaveLength(2);
    const report = JSON.parse(stdout) as { status: string; repairs: { attempt: number; outcome: string; reason: string; problems?: string[] }[] };
    expect(report.status).toBe('failed');
    expect(report.repairs.map((r) => [r.attempt, r.outcome])).toEqual([
      [1, 'refused'],
      [2, 'refused'],
    ]);
    expect(report.repairs[1]?.problems).toEqual([expect.stringMatching(/^the reply is neither a bare JSON object .*Sorry, I cannot\./)]);
  });

  it('a failed LLM call is a failed attempt, reported with why, and ends the loop', async () => {
    fake.enqueue({ status: 401 });
    const report = await start(host(), pipeline('exit 1'), 3);
    expect(report.status).toBe('failed');
    expect(fake.calls).toHaveLength(1);
    expect(report.errors[0]?.message).toMatch(/repair attempt 1 failed: the repair LLM call failed: Anthropic API rejected the repair request \(401\)/);
    expect(report.repairs).toEqual([expect.objectContaining({ attempt: 1, outcome: 'failed', reason: expect.stringContaining('check ANTHROPIC_API_KEY') })]);
  });

  it('re-runs a changed completed pure node and, through the cache key, what reads it', async () => {
    const workflow: WorkflowInput = {
      nodes: [
        { id: 'fetch', type: 'shell', params: { command: `${mark('fetch')}; echo 5` } },
        { id: 'double', type: 'transform', params: { expression: '$number($) * 3', input: '${fetch.stdout}' } },
        { id: 'check', type: 'shell', params: { command: `${mark('check')}; test \${double.result} -eq 10` } },
      ],
      edges: [
        { from: 'fetch', to: 'double' },
        { from: 'double', to: 'check' },
      ],
      outputs: { doubled: { source: '${double.result}' } },
    };
    propose(workflow, (w) => setParam(w, 'double', 'expression', '$number($) * 2'), 'double must multiply by 2, not 3.');
    const report = await start(host(), workflow);
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ doubled: 10 });
    expect(runs('fetch')).toBe(1);
    expect(runs('check')).toBe(2);
    const doubles = report.steps.filter((s) => s.node_id === 'double');
    expect(doubles.at(-1)).toMatchObject({ status: 'completed', cached: false, repaired: true });
    expect(report.metrics.nodes_executed).toBe(5);
  });

  it('fails with a clear message after malformed replies', async () => {
    fake.enqueue({ text: 'I would change the exit code to 0.' });
    fake.enqueue({ text: '```json\n{"workflow": {"nodes": [}\n```' });
    const report = await start(host(), pipeline('exit 1'), 2);
    expect(report.status).toBe('failed');
    expect(fake.calls).toHaveLength(2);
    expect(report.errors[0]?.message).toMatch(
      /gave up after 2 repair attempt\(s\); attempt 2 was refused: the LLM's repair proposal for node '[^']+' was refused .*not valid JSON/s,
    );
    expect(report.repairs.map((r) => r.outcome)).toEqual(['refused', 'refused']);
  });

  it('without an API key the rules still run, then the run fails saying an LLM repair needs ANTHROPIC_API_KEY', async () => {
    const ruled = await start(host({}), pipeline('echo ${shape.reslt}'));
    expect(ruled.status).toBe('succeeded');
    expect(ruled.repairs).toEqual([expect.objectContaining({ source: 'rules', diff: ['nodes[2].params.command: ${shape.reslt} -> ${shape.result}'] })]);
    const report = await start(host({}), pipeline('exit 1'));
    expect(report.status).toBe('failed');
    expect(report.errors[0]?.message).toMatch(/an LLM repair needs ANTHROPIC_API_KEY; the rules found no fix for node 'use'/);
    expect(report.repairs).toEqual([expect.objectContaining({ outcome: 'failed', reason: expect.stringMatching(/^an LLM repair needs ANTHROPIC_API_KEY/) })]);
    expect(fake.calls).toHaveLength(0);
  });
});
