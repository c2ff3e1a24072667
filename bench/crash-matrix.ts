/**
 * The crash matrix: kills the local host (SIGKILL, through test/support/crash-driver.ts) right after
 * every store write of a run of four side-effecting nodes (shell a, shell b, an http POST h, shell c),
 * and in the middle of a node's work (while b's command runs; while h's request is at the server),
 * resumes each in this process, and checks the same final result with every completed node run exactly
 * once (the node in flight at the kill may run twice: at-least-once). Prints how many kill points were
 * tried and how many held. The default test run (test/e2e/crash.test.ts) covers a reduced set of these points.
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { SqliteRunStore } from '../functions/adapters/sqlite-run-store.ts';
import { LocalHost } from '../functions/hosts/local/local-host.ts';
import { countLines, makeTempDir, spawnCrashDriver, writeWorkflow } from '../test/support/cli-process.ts';

const NODES = ['a', 'b', 'h', 'c'];
/** How long the server holds a request, and b's command sleeps, once begun: the kill lands inside. */
const WORK_MS = 400;

// The http node's side effect: one line per request received, in the case's directory; `<dir>/h.started` once it arrived.
const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const dir = url.searchParams.get('dir') ?? '';
  appendFileSync(join(dir, 'h.count'), 'x\n');
  writeFileSync(join(dir, 'h.started'), '');
  req.resume();
  setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true })), WORK_MS).unref();
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const workflow = (dir: string) => ({
  nodes: [
    { id: 'a', type: 'shell', params: { command: `echo x >> ${dir}/a.count; echo A` } },
    { id: 'b', type: 'shell', params: { command: `echo x >> ${dir}/b.count; touch ${dir}/b.started; sleep ${WORK_MS / 1000}; echo \${a.stdout}-b` } },
    { id: 'h', type: 'http', params: { url: `${base}/charge?dir=${encodeURIComponent(dir)}`, method: 'POST', body: { from: '${b.stdout}' } } },
    { id: 'c', type: 'shell', params: { command: `echo x >> ${dir}/c.count; echo \${b.stdout}-\${h.status_code}-c` } },
  ],
  edges: NODES.slice(1).map((id, i) => ({ from: NODES[i] as string, to: id })),
  outputs: { final: { source: '${c.stdout}' } },
});
const points = ['run:created', ...NODES.flatMap((n) => [`run:${n}:1`, ...(n === 'b' || n === 'h' ? [`mid:${n}:1`] : []), `step:${n}:1`]), 'run:succeeded'];

console.log(`crash-matrix: ${cpus()[0]?.model ?? 'unknown cpu'} x ${cpus().length}, Node ${process.version}`);
const root = makeTempDir('crash-matrix');
const stateDir = join(root, 'state');
let held = 0;
for (const [index, crashAt] of points.entries()) {
  const dir = join(root, `case-${index}`);
  const runId = `matrix-${index}`;
  mkdirSync(dir, { recursive: true });
  const driver = await spawnCrashDriver({ stateDir, workflowPath: writeWorkflow(dir, 'wf', workflow(dir)), runId, crashAt, markerDir: dir }).done;
  const store = SqliteRunStore.open(stateDir);
  try {
    const host = new LocalHost({ store });
    const stored = await host.report(runId);
    const report = stored?.status === 'succeeded' ? stored : await host.resume(runId);
    const counts = NODES.map((n) => countLines(join(dir, `${n}.count`)));
    const [kind, node] = crashAt.split(':');
    const inFlight = (kind === 'run' || kind === 'mid') && node !== 'created' && node !== 'succeeded' ? node : undefined;
    const onceEach = counts.every((count, i) => count === 1 || (NODES[i] === inFlight && count <= 2));
    const ok = driver.signal === 'SIGKILL' && report.success && (report.result as { final?: string }).final === 'A-b-200-c' && onceEach;
    if (ok) held += 1;
    console.log(
      `  ${crashAt.padEnd(14)} ${ok ? 'held' : 'FAILED'} (runs per node ${NODES.map((n, i) => `${n}=${counts[i]}`).join(' ')}, status ${report.status})`,
    );
  } finally {
    store.close();
  }
}
server.close();
console.log(`kill points tried: ${points.length}, held: ${held}`);
process.exitCode = held === points.length ? 0 : 1;
