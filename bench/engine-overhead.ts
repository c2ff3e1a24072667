// Engine overhead: a chain of 200 no-op transform nodes through the local host (real ASL in
// aws-local-stepfunctions, real handlers, checkpoints in dynalite on disk) versus calling the same
// runner directly in a loop. Prints ms per node and the ratio; no assertions (see README).
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalHost } from '../functions/hosts/local/local-host.ts';
import { SqliteRunStore } from '../functions/adapters/sqlite-run-store.ts';
import { WorkflowSchema } from '../functions/core/ir.ts';
import { MemoryRunStore } from '../functions/core/memory-run-store.ts';
import { transformRunner } from '../functions/nodes/transform.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const NODES = Number(process.env.BENCH_NODES ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const workflow = WorkflowSchema.parse({
  nodes: Array.from({ length: NODES }, (_, i) => ({
    id: `n${i}`,
    type: 'transform',
    params: { expression: '$', input: i === 0 ? 0 : `\${n${i - 1}.result}` },
  })),
  edges: Array.from({ length: NODES - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});

const direct = async (): Promise<number> => {
  const t = performance.now();
  let value: unknown = 0;
  for (let i = 0; i < NODES; i += 1) {
    const r = await transformRunner.run({ expression: '$', input: value }, { runId: 'bench', nodeId: `n${i}`, seq: i + 1, cacheKey: 'k' });
    if (r.kind !== 'ok') throw new Error('transform failed');
    value = r.outputs.result;
  }
  return performance.now() - t;
};

const throughHost = async (host: LocalHost): Promise<number> => {
  const t = performance.now();
  const report = await host.start({ workflow, workflowName: 'bench', params: {}, repairEnabled: false, maxRepairs: 0 });
  if (!report.success || report.metrics.nodes_executed !== NODES) throw new Error(`run failed: ${JSON.stringify(report.errors)}`);
  return performance.now() - t;
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const stateDir = mkdtempSync(join(tmpdir(), 'flowmend-bench-'));
const local = { store: SqliteRunStore.open(stateDir) };
try {
  const onDisk = new LocalHost({ store: local.store });
  const inMemory = new LocalHost({ store: new MemoryRunStore() });
  await direct();
  await throughHost(inMemory); // warm-up: JIT, jsonata cache, ASL
  const d: number[] = [];
  const disk: number[] = [];
  const mem: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    d.push(await direct());
    disk.push(await throughHost(onDisk));
    mem.push(await throughHost(inMemory));
  }
  const perNode = (ms: number) => ms / NODES;
  const ds = perNode(median(d));
  const hd = perNode(median(disk));
  const hm = perNode(median(mem));
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}`);
  console.log(`chain of ${NODES} no-op transform nodes, median of ${ROUNDS} rounds`);
  console.log(`direct runner calls          ${ds.toFixed(3)} ms/node`);
  console.log(`local host, SQLite on disk   ${hd.toFixed(3)} ms/node  (engine overhead ${(hd - ds).toFixed(3)} ms/node, ratio ${(hd / ds).toFixed(1)}x)`);
  console.log(`local host, in-memory store  ${hm.toFixed(3)} ms/node  (engine overhead ${(hm - ds).toFixed(3)} ms/node)`);
  console.log(`store operations per node (on disk): ${JSON.stringify({ reads: onDisk.store.counters.reads / (ROUNDS * NODES), writes: onDisk.store.counters.writes / (ROUNDS * NODES) })}`);
  console.log(`state transitions per node: ${(onDisk.stats.transitions / (ROUNDS * NODES)).toFixed(2)}`);
  console.log(`target: engine overhead under 5 ms/node -> ${hd - ds < 5 ? 'met' : 'NOT met'}`);
} finally {
  local.store.close();
  rmSync(stateDir, { recursive: true, force: true });
}
