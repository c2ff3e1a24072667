import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BlobOffloadRunStore } from '../../functions/adapters/blob-offload-run-store.ts';
import { FileBlobStore } from '../../functions/adapters/file-blob-store.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { DEFAULT_LIMITS } from '../../functions/core/limits.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { parseWorkflow } from '../../functions/core/parse-workflow.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { makeTempDir } from '../support/cli-process.ts';

const root = makeTempDir('batch');
const store = SqliteRunStore.open(join(root, 'state'));
afterAll(() => store.close());

let runs = 0;
const start = (host: LocalHost, workflow: WorkflowInput, params: Record<string, unknown> = {}) => {
  const parsed = parseWorkflow(workflow);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  runs += 1;
  return host.start({ workflow: parsed.workflow, workflowName: `batch-${runs}`, params, repairEnabled: false, maxRepairs: 0, runId: `batch-run-${runs}` });
};

/** How many times each item's side effect happened, by index (one line `<index>` per run of an item). */
const sideEffects = (file: string): Record<number, number> => {
  const counts: Record<number, number> = {};
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) counts[Number(line)] = (counts[Number(line)] ?? 0) + 1;
  return counts;
};
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('batch through the local host', () => {
  it('fail-fast: item 13 of 20 fails; after the fix, resume replays items 0-12 and runs 13-19, each side effect once', async () => {
    const dir = makeTempDir('batch-fail-fast');
    const host = new LocalHost({ store });
    const items = range(0, 20).map((i) => `f${i}`);
    const workflow: WorkflowInput = {
      nodes: [
        {
          id: 'each',
          type: 'shell',
          params: {
            command: `if [ \${__index__} = 13 ] && [ ! -f ${dir}/fixed ]; then echo broken >&2; exit 3; fi; echo \${__index__} >> ${dir}/side; printf '%s' \${item}`,
          },
          batch: { items },
        },
        { id: 'after', type: 'transform', params: { expression: '$count(results)', input: '${each}' } },
      ],
      edges: [{ from: 'each', to: 'after' }],
      outputs: { done: { source: '${after.result}' }, last: { source: '${each.results[19].stdout}' } },
    };
    const first = await start(host, workflow);
    expect(first).toMatchObject({ success: false, status: 'failed' });
    expect(first.errors[0]).toMatchObject({ node_id: 'each', code: 'BATCH_ITEM_FAILED', message: expect.stringContaining('item 14 of 20 failed') });
    expect(sideEffects(join(dir, 'side'))).toEqual(Object.fromEntries(range(0, 13).map((i) => [i, 1])));

    writeFileSync(join(dir, 'fixed'), '');
    const resumed = await host.resume(first.run_id);
    expect(resumed).toMatchObject({ success: true, result: { done: 20, last: 'f19' } });
    expect(sideEffects(join(dir, 'side'))).toEqual(Object.fromEntries(range(0, 20).map((i) => [i, 1])));
    const batchStep = resumed.steps.filter((s) => s.node_id === 'each').at(-1);
    expect(batchStep).toMatchObject({ status: 'completed', batch: { count: 20, success_count: 20, error_count: 0, replayed_count: 13 } });
    expect(batchStep?.batch?.items.filter((i) => !i.replayed).map((i) => i.index)).toEqual(range(13, 20));
  });

  it('continue: failed items are counted and routed on by the error edge; nested index templates read another batch item by item', async () => {
    const host = new LocalHost({ store });
    const workflow: WorkflowInput = {
      nodes: [
        { id: 'list', type: 'transform', params: { expression: '[1, 2, 3, 4]' } },
        {
          id: 'first',
          type: 'shell',
          params: { command: 'if [ ${item} = 3 ]; then echo "no three" >&2; exit 1; fi; printf "%s0" ${item}' },
          batch: { items: '${list.result}', parallel: true, max_concurrent: 2, error_handling: 'continue' },
        },
        { id: 'handle', type: 'transform', params: { expression: 'error_count', input: '${first}' } },
        {
          id: 'second',
          type: 'transform',
          params: { expression: "$ & '!'", input: '${first.results[${__index__}].stdout}' },
          batch: { items: '${list.result}', as: 'n', error_handling: 'continue' },
        },
      ],
      edges: [
        { from: 'list', to: 'first' },
        { from: 'first', to: 'handle', action: 'error' },
        { from: 'handle', to: 'second' },
      ],
      outputs: { handled: { source: '${handle.result}' }, first: { source: '${first}' }, second: { source: '${second}' } },
    };
    const report = await start(host, workflow);
    expect(report).toMatchObject({ success: true, status: 'succeeded' });
    expect(report.result.handled).toBe(1);
    expect(report.result.first).toMatchObject({
      count: 4,
      success_count: 3,
      error_count: 1,
      errors: [{ index: 2, message: expect.stringContaining('no three') }],
    });
    // pflow's shape: a failed item's result holds its outputs and its error.
    const firstResults = (report.result.first as { results: { stdout: string; exit_code: number; error?: string }[] }).results;
    expect(firstResults.map((r) => r.stdout)).toEqual(['10', '20', '', '40']);
    expect(firstResults[2]).toMatchObject({ exit_code: 1, error: expect.stringContaining('no three') });
    expect(report.result.second).toMatchObject({
      count: 4,
      error_count: 0,
      results: [{ result: '10!' }, { result: '20!' }, { result: '!' }, { result: '40!' }],
    });
    expect(report.steps.filter((s) => s.node_id === 'first').map((s) => s.action)).toEqual(['error']);
  });

  it('10,000 trivial items: every state payload, store item and the run item stay within AWS limits, and memory stays bounded', async () => {
    const inner = new MemoryRunStore();
    const blobs = new FileBlobStore(makeTempDir('batch-big'));
    let peakHeap = 0;
    const host = new LocalHost({
      store: new BlobOffloadRunStore(inner, blobs),
      blobs,
      onWrite: () => (peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed)),
    });
    const heapBefore = process.memoryUsage().heapUsed;
    const report = await start(host, {
      nodes: [
        { id: 'list', type: 'transform', params: { expression: '[0..9999]' } },
        {
          id: 'each',
          type: 'transform',
          params: { expression: '$ * 2', input: '${item}' },
          batch: { items: '${list.result}', parallel: true, max_concurrent: 100 },
        },
        { id: 'sum', type: 'transform', params: { expression: '$sum(results.result)', input: '${each}' } },
      ],
      edges: [
        { from: 'list', to: 'each' },
        { from: 'each', to: 'sum' },
      ],
      outputs: { sum: { source: '${sum.result}' }, count: { source: '${each.success_count}' } },
    });
    // The host dies at any state output over 256 KiB (AWS's limit), so success proves the payloads fit.
    expect(report).toMatchObject({ success: true, result: { sum: 9999 * 10000, count: 10000 } });
    const step = report.steps.find((s) => s.node_id === 'each');
    expect(step?.batch).toMatchObject({ count: 10000, success_count: 10000, items_omitted: 9900 });
    expect(step?.batch?.items).toHaveLength(100);
    const records = await inner.listRecords(report.run_id);
    expect(records).toHaveLength(10003);
    const largest = Math.max(...records.map((r) => JSON.stringify(r).length));
    expect(largest).toBeLessThan(400 * 1024); // a DynamoDB item
    expect(JSON.stringify(await inner.getRun(report.run_id)).length).toBeLessThan(16 * 1024);
    expect(peakHeap - heapBefore).toBeLessThan(400 * 1024 * 1024);
  }, 60_000);

  it('refuses a batch over the items limit, and a run over its item records, naming the limit and its variable', async () => {
    const host = new LocalHost({ store, runLimits: { ...DEFAULT_LIMITS, maxBatchItems: 5, maxItemRecords: 8 } });
    const batch = (count: number): WorkflowInput['nodes'][number] => ({
      id: `b${count}`,
      type: 'transform',
      params: { expression: '$', input: '${item}' },
      batch: { items: range(0, count) },
    });
    const tooMany = await start(host, { nodes: [batch(6)] });
    expect(tooMany.errors[0]).toMatchObject({
      code: 'BATCH_ITEM_LIMIT',
      fixable: false,
      message: expect.stringContaining('6 batch items, over the limit (FLOWMEND_MAX_BATCH_ITEMS=5)'),
    });
    const overRun = await start(host, { nodes: [batch(5), batch(4)], edges: [{ from: 'b5', to: 'b4' }] });
    expect(overRun.errors[0]).toMatchObject({ node_id: 'b4', code: 'ITEM_RECORD_LIMIT', message: expect.stringContaining('(FLOWMEND_MAX_ITEM_RECORDS=8)') });
  });

  it('runs a parallel batch max_concurrent items at a time (the Map honours its width), a sequential one item at a time', async () => {
    const host = new LocalHost({ store });
    const overlap = async (batch: Record<string, unknown>): Promise<number> => {
      const log = join(makeTempDir('batch-width'), 'log');
      const report = await start(host, {
        nodes: [{ id: 'w', type: 'shell', params: { command: `echo + >> ${log}; sleep 0.1; echo - >> ${log}` }, batch: { items: range(0, 4), ...batch } }],
      });
      expect(report.success).toBe(true);
      let now = 0;
      let most = 0;
      for (const mark of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
        now += mark === '+' ? 1 : -1;
        most = Math.max(most, now);
      }
      return most;
    };
    expect(await overlap({ parallel: true, max_concurrent: 2 })).toBe(2);
    expect(await overlap({})).toBe(1);
  });

  it('max_retries: a failed item runs again, up to max_retries tries in all, before it counts as failed', async () => {
    const host = new LocalHost({ store });
    const dir = makeTempDir('batch-retries');
    // Item 1 fails on its first try only; item 2 fails on every try.
    const command = `echo x >> ${dir}/\${__index__}; test \${item} != 2 || exit 2; test \${item} != 1 || test $(wc -l < ${dir}/\${__index__}) -ge 2`;
    const report = await start(host, {
      nodes: [{ id: 'r', type: 'shell', params: { command }, batch: { items: [0, 1, 2], max_retries: 3, error_handling: 'continue' } }],
      outputs: { r: { source: '${r}' } },
    });
    expect(report.result.r).toMatchObject({ success_count: 2, error_count: 1, errors: [{ index: 2 }] });
    expect(
      [0, 1, 2].map(
        (i) =>
          readFileSync(join(dir, String(i)), 'utf8')
            .split('\n')
            .filter(Boolean).length,
      ),
    ).toEqual([1, 2, 3]);
  });

  it('retry_wait: a failed item waits retry_wait seconds (a Wait in the Map) before its next try; a first try never waits', async () => {
    const host = new LocalHost({ store });
    const dir = makeTempDir('batch-retry-wait');
    // Each try appends its start time (ms); item 1 fails on its first try only.
    const command = `date +%s%3N >> ${dir}/\${__index__}; test \${item} != 1 || test $(wc -l < ${dir}/\${__index__}) -ge 2`;
    const report = await start(host, {
      nodes: [{ id: 'r', type: 'shell', params: { command }, batch: { items: [0, 1], max_retries: 2, retry_wait: 0.5 } }],
      outputs: { r: { source: '${r}' } },
    });
    expect(report.result.r).toMatchObject({ success_count: 2, error_count: 0 });
    const tries = (i: number) =>
      readFileSync(join(dir, String(i)), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map(Number);
    expect(tries(0)).toHaveLength(1);
    const [first, second] = tries(1);
    // 0.5 s rounds up to Step Functions' whole second.
    expect((second ?? 0) - (first ?? 0)).toBeGreaterThanOrEqual(1000);
  });

  it('an item whose templates do not resolve fails alone, before it runs, with the template named', async () => {
    const host = new LocalHost({ store });
    const report = await start(host, {
      nodes: [
        {
          id: 't',
          type: 'transform',
          params: { expression: '$uppercase($)', input: '${item.name}' },
          batch: { items: [{ name: 'a' }, { other: 1 }, { name: 'c' }], error_handling: 'continue' },
        },
      ],
      outputs: { t: { source: '${t}' } },
    });
    expect(report.result.t).toMatchObject({
      results: [{ result: 'A' }, { error: expect.stringContaining('${item.name}') }, { result: 'C' }],
      errors: [{ index: 1, message: expect.stringContaining("'name'") }],
    });
  });
});
