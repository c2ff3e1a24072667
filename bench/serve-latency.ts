// The remote CLI against `flowmend serve` on the same machine: wall time of `flowmend run examples/hello.json
// --api URL` (start the run, then long-poll its events to the end), beside the same run on the local store
// and `flowmend status --api URL` (start-up plus one request). Serve drives the run in its own process and
// its writes wake the waiting long-poll; a run written by another process would be seen at the next poll
// (100 ms). `BENCH_BIN=/path/to/bin/flowmend.cjs` measures another checkout's bin. Prints medians; no assertions.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = process.env.BENCH_BIN ?? join(REPO, 'bin', 'flowmend.cjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 15);
const HELLO = join(REPO, 'examples', 'hello.json');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const timed = (args: string[]): number => {
  const t = performance.now();
  const out = spawnSync(BIN, args, { cwd: REPO, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`flowmend ${args.join(' ')} exited ${out.status}: ${out.stderr || out.stdout}`);
  return performance.now() - t;
};

const listening = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1];
      if (url) resolve(url);
    });
    child.once('exit', (code) => reject(new Error(`flowmend serve exited ${code}: ${log}`)));
  });

const stateDir = mkdtempSync(join(tmpdir(), 'flowmend-serve-bench-'));
const server = spawn(BIN, ['serve', '--port', '0', '--state-dir', join(stateDir, 'serve')], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
try {
  const api = await listening(server);
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}, load average ${loadavg()[0]?.toFixed(1)}; bin ${BIN}`);
  const local = ['run', HELLO, '--state-dir', join(stateDir, 'local')];
  const remote = ['run', HELLO, '--api', api];
  // Once each first: the state dirs, the definition memo and the server's own first run.
  timed(local);
  timed(remote);
  const runId = (JSON.parse(spawnSync(BIN, ['runs', '--api', api, '--output-format', 'json'], { encoding: 'utf8' }).stdout) as { runs: { run_id: string }[] })
    .runs[0]?.run_id as string;
  const walls: Record<'local' | 'remote' | 'status', number[]> = { local: [], remote: [], status: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    walls.local.push(timed(local));
    walls.remote.push(timed(remote));
    walls.status.push(timed(['status', runId, '--api', api]));
  }
  console.log(
    `flowmend run examples/hello.json: --api (serve on 127.0.0.1) ${median(walls.remote).toFixed(0)} ms, local store ${median(walls.local).toFixed(0)} ms;` +
      ` flowmend status --api ${median(walls.status).toFixed(0)} ms (medians of ${ROUNDS})`,
  );
  console.log(`--api runs, each (ms): ${walls.remote.map((ms) => ms.toFixed(0)).join(' ')}`);
} finally {
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  rmSync(stateDir, { recursive: true, force: true });
}
