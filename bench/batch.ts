// Batch overhead on the embedded default (issue 14): a batch of N no-op transform items through the local
// host (the real ASL with its RunBatch Map in aws-local-stepfunctions, the real handlers, SQLite on disk
// with synchronous FULL, large records as blobs as the CLI keeps them), less the same runner called
// directly N times; per item, for a sequential batch and a parallel one (max_concurrent 10 and 100).
// Then the peak memory (max RSS) and the largest stored row of a run of 10,000 items.
// Prints figures and the machine; no assertions (see README).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlobOffloadRunStore } from '../functions/adapters/blob-offload-run-store.ts';
import { FileBlobStore } from '../functions/adapters/file-blob-store.ts';
import { openSqlite } from '../functions/adapters/sqlite-database.ts';
import { SqliteRunStore } from '../functions/adapters/sqlite-run-store.ts';
import { type WorkflowInput, WorkflowSchema } from '../functions/core/index.ts';
import { LocalHost } from '../functions/hosts/local/local-host.ts';
import { transformRunner } from '../functions/nodes/transform.ts';

const SIZES = (process.env.BENCH_ITEMS ?? '1000').split(',').map(Number);
const BIG = Number(process.env.BENCH_BIG ?? 10_000);

const batchOf = (items: number, batch: Record<string, unknown>): WorkflowInput => ({
  nodes: [
    { id: 'list', type: 'transform', params: { expression: `[0..${items - 1}]` } },
    { id: 'each', type: 'transform', params: { expression: '$', input: '${item}' }, batch: { items: '${list.result}', ...batch } },
  ],
  edges: [{ from: 'list', to: 'each' }],
  outputs: { ok: { source: '${each.success_count}' } },
});

const direct = async (items: number): Promise<number> => {
  const t = performance.now();
  for (let i = 0; i < items; i += 1) {
    const r = await transformRunner.run({ expression: '$', input: i }, { runId: 'bench', nodeId: 'each', seq: i + 1, cacheKey: 'k' });
    if (r.kind !== 'ok') throw new Error('transform failed');
  }
  return performance.now() - t;
};

const through = async (dir: string, items: number, batch: Record<string, unknown>): Promise<{ ms: number; runId: string; store: SqliteRunStore }> => {
  const sqlite = SqliteRunStore.open(dir);
  const blobs = new FileBlobStore(dir);
  const host = new LocalHost({ store: new BlobOffloadRunStore(sqlite, blobs), blobs, validateDefinition: false });
  const t = performance.now();
  const report = await host.start({
    workflow: WorkflowSchema.parse(batchOf(items, batch)),
    workflowName: 'bench',
    params: {},
    repairEnabled: false,
    maxRepairs: 0,
  });
  const ms = performance.now() - t;
  if (!report.success || report.result.ok !== items) throw new Error(`run failed: ${JSON.stringify(report.errors)}`);
  return { ms, runId: report.run_id, store: sqlite };
};

const root = mkdtempSync(join(tmpdir(), 'flowmend-bench-batch-'));
console.log(
  `machine: ${cpus().length}x ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
for (const items of SIZES) {
  const base = await direct(items);
  for (const [name, batch] of [
    ['sequential', {}],
    ['parallel 10', { parallel: true, max_concurrent: 10 }],
    ['parallel 100', { parallel: true, max_concurrent: 100 }],
  ] as const) {
    const { ms, store } = await through(join(root, `${items}-${name.replace(' ', '-')}`), items, batch);
    store.close();
    console.log(
      `${items} items, ${name}: ${ms.toFixed(0)} ms through the host, ${base.toFixed(0)} ms direct: ${((ms - base) / items).toFixed(2)} ms overhead per item`,
    );
  }
}

const dir = join(root, 'big');
const { ms, runId, store } = await through(dir, BIG, { parallel: true, max_concurrent: 100 });
store.close();
const { db } = openSqlite(dir);
const rowBytes = (table: string) => (db.prepare(`SELECT max(length(body)) AS n FROM ${table} WHERE run_id = ?`).get(runId) as { n: number }).n;
console.log(
  `${BIG} items, parallel 100: ${ms.toFixed(0)} ms (${(ms / BIG).toFixed(2)} ms per item); largest step row ${rowBytes('steps')} bytes, run row ${rowBytes('runs')} bytes`,
);
console.log(`peak memory (max RSS) of this process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`);
db.close();
rmSync(root, { recursive: true, force: true });
