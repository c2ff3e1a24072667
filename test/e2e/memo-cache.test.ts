import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAnthropicLlmClient } from '../../functions/adapters/anthropic-llm-client.ts';
import { openSqlite } from '../../functions/adapters/sqlite-database.ts';
import { SqliteMemoStore } from '../../functions/adapters/sqlite-memo-store.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { makeLlmRunner } from '../../functions/nodes/llm.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';

// pflow's memo cache through the local host (issue 29): results reused across runs, on the state dir's SQLite,
// by node type and resolved params, within the TTL; llm nodes by default, `cache` per node.
let fake: FakeAnthropic;
let dir: string;
let now = 1_800_000_000_000;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  dir = mkdtempSync(join(tmpdir(), 'flowmend-memo-e2e-'));
});
afterAll(async () => {
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

const workflow = (extra: Record<string, unknown> = {}, shellCache?: boolean): WorkflowInput => ({
  inputs: { topic: { type: 'string' } },
  nodes: [
    { id: 'stamp', type: 'shell', params: { command: `echo "$$"` }, ...(shellCache === undefined ? {} : { cache: shellCache }) },
    { id: 'ask', type: 'llm', params: { prompt: 'Say something about ${topic}', model: 'claude-haiku-4-5' }, ...extra },
  ],
  edges: [{ from: 'stamp', to: 'ask' }],
  outputs: { answer: { source: '${ask.response}' }, stamp: { source: '${stamp.stdout}' } },
});

const run = async (wf: WorkflowInput, topic: string, memoTtlS?: number, noCache = false) => {
  const database = openSqlite(dir);
  const store = new SqliteRunStore(database);
  const runners = [shellRunner, makeLlmRunner({ config: () => ({ apiKey: 'test-key', baseURL: fake.baseURL }), client: makeAnthropicLlmClient() })];
  try {
    const host = new LocalHost({
      store,
      runners,
      memo: new SqliteMemoStore(database.db, database.path),
      now: () => now,
      retryIntervalMs: 0,
      ...(memoTtlS === undefined ? {} : { memoTtlS }),
    });
    return await host.start({ workflow: WorkflowSchema.parse(wf), workflowName: 'memo', params: { topic }, repairEnabled: false, maxRepairs: 0, noCache });
  } finally {
    store.close();
  }
};

describe('the memo cache (pflow: cache per node, llm on by default)', () => {
  it("reuses an llm node's result in a later run with the same resolved params: no second call, the step counts as cached", async () => {
    fake.enqueue({ text: 'first answer' });
    const first = await run(workflow(), 'otters');
    expect(first).toMatchObject({ status: 'succeeded', result: { answer: 'first answer' }, metrics: { nodes_executed: 2, nodes_cached: 0 } });
    const calls = fake.calls.length;
    const second = await run(workflow(), 'otters');
    expect(second).toMatchObject({ status: 'succeeded', result: { answer: 'first answer' }, metrics: { nodes_executed: 1, nodes_cached: 1 } });
    expect(fake.calls.length).toBe(calls);
    // The shell node is not memoized by default: it ran again (another process id).
    expect(second.result.stamp).not.toBe(first.result.stamp);
  });

  it('never reuses a result across different params, nor for a node with cache: false', async () => {
    fake.enqueue({ text: 'about badgers' });
    expect((await run(workflow(), 'badgers')).result).toMatchObject({ answer: 'about badgers' });
    fake.enqueue({ text: 'fresh otters' });
    expect((await run(workflow({ cache: false }), 'otters')).result).toMatchObject({ answer: 'fresh otters' });
    expect(fake.pending()).toBe(0);
  });

  it('reuses a result only within the TTL (FLOWMEND_MEMO_TTL_S; 0 turns the cache off)', async () => {
    fake.enqueue({ text: 'weasels at t0' });
    await run(workflow(), 'weasels', 60);
    now += 59_000;
    expect((await run(workflow(), 'weasels', 60)).result).toMatchObject({ answer: 'weasels at t0' });
    now += 2_000;
    fake.enqueue({ text: 'weasels later' });
    expect((await run(workflow(), 'weasels', 60)).result).toMatchObject({ answer: 'weasels later' });
    fake.enqueue({ text: 'weasels uncached' });
    expect((await run(workflow(), 'weasels', 0)).result).toMatchObject({ answer: 'weasels uncached' });
  });

  it("pflow's --no-cache: the run reads no entry but still writes its own, which the next run reuses", async () => {
    fake.enqueue({ text: 'voles first' });
    await run(workflow(), 'voles');
    fake.enqueue({ text: 'voles recomputed' });
    const bypassed = await run(workflow(), 'voles', undefined, true);
    expect(bypassed).toMatchObject({ result: { answer: 'voles recomputed' }, metrics: { nodes_cached: 0, nodes_executed: 2 } });
    expect((await run(workflow(), 'voles')).result).toMatchObject({ answer: 'voles recomputed' });
    expect(fake.pending()).toBe(0);
  });

  it('memoizes another node type when it says cache: true', async () => {
    fake.enqueue({ text: 'stamped' });
    const first = await run(workflow({}, true), 'stoats');
    fake.enqueue({ text: 'unused' });
    const second = await run(workflow({}, true), 'stoats');
    expect(second.result.stamp).toBe(first.result.stamp);
    expect(second.metrics).toMatchObject({ nodes_cached: 2, nodes_executed: 0 });
    expect(fake.pending()).toBe(1);
  });
});
