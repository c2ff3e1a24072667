// Local run store latency: daemon cold start, then putRun / getRun / putRecord against the on-disk daemon
// (dynalite over LevelDB in a temp state dir, one client, sequential ops). Prints medians and p95; no assertions.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { discoverDaemon, openLocalStore, stopLocalDaemon } from '../functions/adapters/local-dynamo.ts';
import type { RunItem, NodeRecord } from '../functions/core/run-model.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const OPS = Number(process.env.BENCH_OPS ?? 200);
const COLD_STARTS = Number(process.env.BENCH_COLD_STARTS ?? 5);

const stats = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return `median ${at(0.5).toFixed(2)} ms, p95 ${at(0.95).toFixed(2)} ms (n=${samples.length})`;
};

const time = async (fn: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

const root = mkdtempSync(join(tmpdir(), 'flowmend-bench-store-'));
try {
  const coldStarts: number[] = [];
  const coldOpens: number[] = [];
  for (let i = 0; i < COLD_STARTS; i++) {
    const dir = join(root, `cold-${i}`);
    coldStarts.push(await time(() => discoverDaemon(dir)));
    await stopLocalDaemon(dir);
    coldOpens.push(await time(async () => (await openLocalStore(dir)).close()));
    await stopLocalDaemon(dir);
  }

  const dir = join(root, 'hot');
  const local = await openLocalStore(dir);
  const now = Date.now();
  const run = (i: number): RunItem => ({
    runId: `bench_run_${i}`, workflowName: 'bench', status: 'running', irVersion: 0, params: { i, text: 'hello' },
    createdAt: now, updatedAt: now, seq: 0, eventSeq: 0, repairedNodes: [], pendingRecords: [], flushedThrough: 0, needsWalk: false, latest: { a: 1 }, visits: { a: 1 },
    repairEnabled: true, maxRepairs: 3, repairAttempts: 0, warnings: [], mode: 'express',
    metrics: { nodesExecuted: 0, nodesCached: 0, llmInputTokens: 0, llmOutputTokens: 0, llmCostUsd: 0, repairInputTokens: 0, repairOutputTokens: 0, repairCostUsd: 0 },
  });
  const step = (seq: number): NodeRecord => ({
    runId: 'bench_run_0', seq, nodeId: `n${seq}`, nodeType: 'shell', visit: 1, status: 'completed', cacheKey: 'k'.repeat(64),
    sideEffects: true, irVersion: 0, startedAt: now, finishedAt: now, durationMs: 3, action: 'default',
    outputs: { stdout: 'x'.repeat(200), stderr: '', exit_code: 0 },
  });
  for (let i = 0; i < 20; i++) await local.store.getRun('warm_up');

  const putRuns: number[] = [];
  for (let i = 0; i < OPS; i++) putRuns.push(await time(() => local.store.putRun(run(i), { notExists: true })));
  const getRuns: number[] = [];
  for (let i = 0; i < OPS; i++) getRuns.push(await time(() => local.store.getRun(`bench_run_${i}`)));
  const putRecords: number[] = [];
  for (let i = 1; i <= OPS; i++) putRecords.push(await time(() => local.store.putRecord(step(i), null)));
  const advance: number[] = [];
  for (let i = 1; i <= OPS; i++) advance.push(await time(() => local.store.putRun({ ...run(0), seq: i }, { seq: i - 1 })));
  await local.close();
  await stopLocalDaemon(dir);

  console.log(`machine: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}`);
  console.log(`daemon cold start (spawn -> dynalite.json -> answers): ${stats(coldStarts)}`);
  console.log(`openLocalStore on an existing state dir, no daemon running (incl. ensureTable): ${stats(coldOpens)}`);
  console.log(`putRun (create, attribute_not_exists): ${stats(putRuns)}`);
  console.log(`putRun (advance, seq condition):        ${stats(advance)}`);
  console.log(`getRun (consistent GetItem):            ${stats(getRuns)}`);
  console.log(`putRecord (create, attribute_not_exists): ${stats(putRecords)}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
