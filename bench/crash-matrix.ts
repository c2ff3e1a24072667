/**
 * The crash matrix: kills the local host (SIGKILL, through test/support/crash-driver.ts) right after
 * every store write of a run of three side-effecting shell nodes, resumes each in this process, and
 * checks the same final result with every completed node run exactly once (the node in flight at the
 * kill may run twice: at-least-once). Prints how many kill points were tried and how many held.
 * The default test run (test/e2e/crash.test.ts) covers a reduced set of these points.
 */
import { mkdirSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { SqliteRunStore } from '../functions/adapters/sqlite-run-store.ts';
import { LocalHost } from '../functions/hosts/local/local-host.ts';
import { countLines, makeTempDir, spawnCrashDriver, writeWorkflow } from '../test/support/cli-process.ts';

const NODES = ['a', 'b', 'c'];
const workflow = (dir: string) => ({
  nodes: NODES.map((id, i) => ({ id, type: 'shell', params: { command: i === 0 ? `echo x >> ${dir}/${id}.count; echo A` : `echo x >> ${dir}/${id}.count; echo \${${NODES[i - 1]}.stdout}-${id}` } })),
  edges: NODES.slice(1).map((id, i) => ({ from: NODES[i] as string, to: id })),
  outputs: { final: { source: '${c.stdout}' } },
});
const points = ['run:created', ...NODES.flatMap((n) => [`run:${n}:1`, `step:${n}:1`]), 'run:succeeded'];

console.log(`crash-matrix: ${cpus()[0]?.model ?? 'unknown cpu'} x ${cpus().length}, Node ${process.version}`);
const root = makeTempDir('crash-matrix');
const stateDir = join(root, 'state');
let held = 0;
for (const [index, crashAt] of points.entries()) {
  const dir = join(root, `case-${index}`);
  const runId = `matrix-${index}`;
  mkdirSync(dir, { recursive: true });
  const driver = await spawnCrashDriver({ stateDir, workflowPath: writeWorkflow(dir, 'wf', workflow(dir)), runId, crashAt }).done;
  const store = SqliteRunStore.open(stateDir);
  try {
    const host = new LocalHost({ store });
    const stored = await host.report(runId);
    const report = stored?.status === 'succeeded' ? stored : await host.resume(runId);
    const counts = NODES.map((n) => countLines(join(dir, `${n}.count`)));
    const inFlight = crashAt.startsWith('run:') && crashAt !== 'run:created' && crashAt !== 'run:succeeded' ? crashAt.split(':')[1] : undefined;
    const onceEach = counts.every((count, i) => count === 1 || (NODES[i] === inFlight && count <= 2));
    const ok = driver.signal === 'SIGKILL' && report.success && (report.result as { final?: string }).final === 'A-b-c' && onceEach;
    if (ok) held += 1;
    console.log(`  ${crashAt.padEnd(14)} ${ok ? 'held' : 'FAILED'} (runs per node ${counts.join('/')}, status ${report.status})`);
  } finally {
    store.close();
  }
}
console.log(`kill points tried: ${points.length}, held: ${held}`);
process.exitCode = held === points.length ? 0 : 1;
