// serve's writer thread against each thread committing its own writes (issue 30), in one process: BENCH_RUNS
// (200) runs of a chain of BENCH_STEPS (10) no-op transform nodes started at once on the local host over SQLite
// on disk, alternating a store that commits on its own connection with one whose writes go to the writer thread
// (functions/adapters/sqlite-writer-thread.ts), BENCH_ROUNDS (5) rounds after a warm-up. Prints runs completed per
// second and the process's CPU a step (every thread, the writer's included), medians. Needs `node scripts/build.mjs`
// (the writer's file is dist/sqlite-writer.cjs). No assertions.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../functions/adapters/sqlite-database.ts';
import { SqliteRunStore } from '../functions/adapters/sqlite-run-store.ts';
import { findSqliteWriterFile, startSqliteWriter } from '../functions/adapters/sqlite-writer-thread.ts';
import { EngineCache, WorkflowSchema } from '../functions/core/index.ts';
import { LocalHost } from '../functions/hosts/local/local-host.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const STEPS = Number(process.env.BENCH_STEPS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);

const workflow = WorkflowSchema.parse({
  nodes: Array.from({ length: STEPS }, (_, i) => ({
    id: `n${i}`,
    type: 'transform',
    params: { expression: '$', input: i === 0 ? 0 : `\${n${i - 1}.result}` },
  })),
  edges: Array.from({ length: STEPS - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const file = findSqliteWriterFile();
if (!file) throw new Error('dist/sqlite-writer.cjs is missing: run node scripts/build.mjs first');
const root = mkdtempSync(join(tmpdir(), 'flowmend-writer-bench-'));
const open = async (name: 'own connection' | 'writer thread') => {
  const dir = join(root, name.replace(' ', '-'));
  const writer = name === 'writer thread' ? await startSqliteWriter(file, dir, (message) => console.error(message)) : undefined;
  const store = new SqliteRunStore(openSqlite(dir), { writerPort: writer?.port() });
  return { name, store, writer, host: new LocalHost({ store, cache: EngineCache.forConcurrentRuns(RUNS) }), perSecond: [] as number[], cpu: [] as number[] };
};
try {
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} when started`);
  const ways = [await open('own connection'), await open('writer thread')];
  for (let round = 0; round <= ROUNDS; round += 1) {
    for (const way of ways) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      await Promise.all(
        Array.from({ length: RUNS }, () => way.host.start({ workflow, workflowName: 'bench', params: {}, repairEnabled: false, maxRepairs: 0 })),
      );
      const wall = performance.now() - started;
      const used = process.cpuUsage(cpu);
      if (round === 0) continue; // warm-up
      way.perSecond.push((RUNS * 1000) / wall);
      way.cpu.push((used.user + used.system) / 1000 / (RUNS * STEPS));
    }
  }
  for (const way of ways) {
    console.log(
      `${way.name}: ${median(way.perSecond).toFixed(0)} runs/s, ${median(way.cpu).toFixed(3)} ms of CPU a step ` +
        `(medians of ${ROUNDS}; runs/s by round ${way.perSecond.map((x) => x.toFixed(0)).join(' ')})`,
    );
    way.store.close();
    await way.writer?.close();
  }
  console.log(`load average when done: ${loadavg()[0]?.toFixed(1)}`);
} finally {
  rmSync(root, { recursive: true, force: true });
}
