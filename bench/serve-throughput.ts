// Throughput of `flowmend serve` (issue 30): N runs of an M-step chain of no-op transform nodes, started at
// once through serve's API (POST /runs, all in flight together), on a fresh state dir. Prints, per round:
// runs completed per second (N over the time from the first POST to the last run's final commit), p50/p99
// time to finish (a run's final commit less its POST), CPU of each process of serve (user+system, from
// /proc) and per step, and of serve's main thread alone (its API and, with --workers, their relay), peak memory (the sum of serve's processes' RSS, sampled, and each one's high-water
// mark), and how long serve's API took to answer a GET of a run while it drove the batch, once every POST was answered (responsiveness).
// Completion is read from the state dir's SQLite file by this process (a WAL reader: serve is not asked).
//
// Alternate builds in one sitting (the machine is noisy): BENCH_BINS="main=/path/to/bin/flowmend.cjs,new=bin/flowmend.cjs"
// runs each in turn (an entry may add serve arguments after the path: "w0=bin/flowmend.cjs --workers 0"), BENCH_ROUNDS times, and prints medians per label. BENCH_RUNS (200), BENCH_STEPS (10),
// BENCH_SERVE_ARGS (extra arguments for serve, for every label), BENCH_WARMUP (runs started before the measured batch,
// in batches of up to BENCH_RUNS at once, not measured: 20, the default, leaves much of serve's code still being
// compiled by V8 during the batch; 200 measures a serve that has run a batch like it before),
// BENCH_NODE_ARGS (node flags for serve, e.g. --cpu-prof), BENCH_NODE=shell (a chain of shell nodes running `true`:
// a process each step, started from serve's command helper), BENCH_CONNECTIONS (the POSTs over at most that many
// kept-alive connections, as a client with a pool sends them; default: one connection each, all at once, which
// past the listen backlog's 511 measures TCP's retries of dropped connects rather than serve). Prints figures and
// the machine; no assertions.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { benchBins } from './bench-bins.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BINS = benchBins(REPO);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const STEPS = Number(process.env.BENCH_STEPS ?? 10);
const SERVE_ARGS = (process.env.BENCH_SERVE_ARGS ?? '').split(' ').filter(Boolean);
const NODE_ARGS = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 20);
const CONNECTIONS = process.env.BENCH_CONNECTIONS ? Number(process.env.BENCH_CONNECTIONS) : undefined;
const pool = CONNECTIONS === undefined ? undefined : new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
const CLOCK_TICK_MS = 10; // USER_HZ is 100 on Linux

/** The chain's node type: `transform` (a no-op JSONata expression, the default) or `shell` (`true`: a process each step). */
const NODE = process.env.BENCH_NODE === 'shell' ? 'shell' : 'transform';

const chain = (steps: number) => ({
  nodes: Array.from({ length: steps }, (_, i) =>
    NODE === 'shell'
      ? { id: `n${i}`, type: 'shell', params: { command: 'true' } }
      : { id: `n${i}`, type: 'transform', params: { expression: '$', input: i === 0 ? 0 : `\${n${i - 1}.result}` } },
  ),
  edges: Array.from({ length: steps - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] as number;
const median = (xs: number[]): number => quantile(xs, 0.5);

/** A process and every process under it (serve's workers, when it forks). */
const processTree = (root: number): number[] => {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i += 1) for (const [pid, parent] of parents) if (parent === tree[i]) tree.push(pid);
  return tree;
};

/** CPU of a process (all its threads), or of its main thread alone (`/proc/PID/task/PID`: serve's API, with --workers). */
const cpuMs = (pid: number, mainThread = false): number => {
  try {
    const fields =
      readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8')
        .split(') ')[1]
        ?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) * CLOCK_TICK_MS;
  } catch {
    return 0;
  }
};

const memoryKb = (pid: number, field: 'VmRSS' | 'VmHWM'): number => {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};

const listening = (child: ChildProcess): Promise<string> =>
  new Promise((done, fail) => {
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(log)?.[1];
      if (url) done(url);
      if (process.env.BENCH_SERVE_LOG) process.stderr.write(chunk);
      if (log.length > 100_000) log = log.slice(-10_000);
    });
    child.once('exit', (code) => fail(new Error(`flowmend serve exited ${code}: ${log}`)));
  });

/** A POST over the pool's connections (BENCH_CONNECTIONS): the status and the body. */
const pooledPost = (url: string, body: string, agent: Agent): Promise<{ status: number; text: string }> =>
  new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });

const startRun = async (api: string, workflow: unknown): Promise<string> => {
  if (pool) {
    const { status, text } = await pooledPost(`${api}/runs`, JSON.stringify({ workflow, name: 'bench', repair: false }), pool);
    const id = (JSON.parse(text) as { run_id?: string }).run_id;
    if (status !== 202 || !id) throw new Error(`POST /runs answered ${status}: ${text}`);
    return id;
  }
  const response = await fetch(`${api}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ workflow, name: 'bench', repair: false }),
  });
  const body = (await response.json()) as { run_id?: string };
  if (response.status !== 202 || !body.run_id) throw new Error(`POST /runs answered ${response.status}: ${JSON.stringify(body)}`);
  return body.run_id;
};

interface Round {
  perSecond: number;
  p50: number;
  p99: number;
  cpuMs: number[];
  /** serve's main thread alone (the API; with --workers, also the relay of the workers' log lines and metrics). */
  mainCpuMs: number;
  peakRssMb: number;
  hwmMb: number[];
  apiP50: number;
  apiMax: number;
  apiCount: number;
  load: number;
}

/** Polls the state dir's database until every run of `ids` is done; resolves with each run's final commit time. */
const finished = async (database: Database.Database, ids: readonly string[]): Promise<Map<string, number>> => {
  const read = database.prepare<[], { run_id: string; status: string; updated_at: number }>(
    "SELECT run_id, json_extract(body, '$.status') AS status, json_extract(body, '$.updatedAt') AS updated_at FROM runs",
  );
  const wanted = new Set(ids);
  for (;;) {
    const done = new Map<string, number>();
    for (const row of read.all()) {
      if (!wanted.has(row.run_id)) continue;
      if (row.status === 'succeeded') done.set(row.run_id, row.updated_at);
      else if (row.status !== 'running') throw new Error(`run ${row.run_id} ended ${row.status}`);
    }
    if (done.size === wanted.size) return done;
    await new Promise((r) => setTimeout(r, 25));
  }
};

const measure = async (bin: string, binArgs: readonly string[]): Promise<Round> => {
  const stateDir = mkdtempSync(join(tmpdir(), 'flowmend-throughput-'));
  const args = ['serve', '--port', '0', '--state-dir', stateDir, ...SERVE_ARGS, ...binArgs];
  // BENCH_NODE_ARGS (e.g. --cpu-prof) runs the bin under node with those flags.
  const server = NODE_ARGS.length
    ? spawn(process.execPath, [...NODE_ARGS, bin, ...args], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] })
    : spawn(bin, args, { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const api = await listening(server);
    const workflow = chain(STEPS);
    const database = new Database(join(stateDir, 'flowmend.db'), { readonly: true, timeout: 10_000 });
    // Warm-up (JIT, the interpreter, serve's workers), not measured: BENCH_WARMUP runs, BENCH_RUNS at most at once.
    const warm: string[] = [];
    for (let left = Math.max(1, WARMUP); left > 0; left -= RUNS) {
      const batch = await Promise.all(Array.from({ length: Math.min(left, RUNS) }, () => startRun(api, workflow)));
      await finished(database, batch);
      warm.push(...batch);
    }
    const pids = () => processTree(server.pid as number);
    const cpuBefore = new Map(pids().map((pid) => [pid, cpuMs(pid)]));
    const mainBefore = cpuMs(server.pid as number, true);
    let peakRssKb = 0;
    const apiMs: number[] = [];
    let probing = false;
    const sample = () => {
      peakRssKb = Math.max(
        peakRssKb,
        pids().reduce((sum, pid) => sum + memoryKb(pid, 'VmRSS'), 0),
      );
      // GET's latency while serve drives runs, once every POST is answered: during the POSTs it measured this
      // process's own queue of 200 requests (a first GET of 1.6-2.2 s whatever serve did).
      if (probing || !posted) return;
      probing = true;
      const t = performance.now();
      void fetch(`${api}/runs/${warm[0]}`)
        .then((r) => r.arrayBuffer())
        .then(() => apiMs.push(performance.now() - t))
        .finally(() => {
          probing = false;
        });
    };
    const load = loadavg()[0] ?? 0;
    const sent = new Map<string, number>();
    let posted = false;
    const sampler = setInterval(sample, 50);
    const t0 = Date.now();
    const ids = await Promise.all(
      Array.from({ length: RUNS }, async () => {
        const at = Date.now();
        const id = await startRun(api, workflow);
        sent.set(id, at);
        return id;
      }),
    );
    posted = true;
    const ends = await finished(database, ids);
    clearInterval(sampler);
    const last = Math.max(...ends.values());
    const toFinish = ids.map((id) => (ends.get(id) as number) - (sent.get(id) as number));
    const tree = pids();
    const result: Round = {
      perSecond: (RUNS * 1000) / (last - t0),
      p50: median(toFinish),
      p99: quantile(toFinish, 0.99),
      cpuMs: tree.map((pid) => cpuMs(pid) - (cpuBefore.get(pid) ?? 0)),
      mainCpuMs: cpuMs(server.pid as number, true) - mainBefore,
      peakRssMb: peakRssKb / 1024,
      hwmMb: tree.map((pid) => memoryKb(pid, 'VmHWM') / 1024),
      apiP50: apiMs.length ? median(apiMs) : Number.NaN,
      apiMax: apiMs.length ? Math.max(...apiMs) : Number.NaN,
      apiCount: apiMs.length,
      load,
    };
    database.close();
    return result;
  } finally {
    server.kill('SIGTERM');
    await new Promise((done) => server.once('exit', done));
    rmSync(stateDir, { recursive: true, force: true });
  }
};

/**
 * Resume through serve: a 100-node chain whose last node fails, resumed through the API. `shell`: the last node
 * is a shell command that fails until a file exists, and the resume (same workflow) comes once the file is
 * there; its first new step forks a process. `patch`: the last node is a transform that fails, and the resume
 * carries the fixed workflow (`{"workflow": ...}`: checked, written as a new version), so no process is
 * started. The resume's work is its claim (the run_resumed event) to its final commit; the first run's, its
 * creation to its failed commit; both on serve's clock, in the state dir (whole milliseconds: a resume of ~10 ms
 * reads as 9, 10 or 11, so the mean of the ratios is printed beside their median). Medians of RESUMES.
 * Before each round, a run of 0-40 transform nodes (the same sequence for every build): serve's young generation
 * is scavenged (~1.7 ms here) each time it fills, and with rounds that allocate alike the scavenges fell in the
 * resumes of one build and in the first runs of another, which moved a build's ratio by 0.02 either way.
 */
const RESUMES = Number(process.env.BENCH_RESUMES ?? 5);
const measureResume = async (
  bin: string,
  binArgs: readonly string[],
  kind: 'shell' | 'patch',
): Promise<{ ratio: number; meanRatio: number; firstMs: number; resumeMs: number }> => {
  const stateDir = mkdtempSync(join(tmpdir(), 'flowmend-resume-'));
  const server = spawn(bin, ['serve', '--port', '0', '--state-dir', stateDir, ...SERVE_ARGS, ...binArgs], { cwd: REPO, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const api = await listening(server);
    const database = new Database(join(stateDir, 'flowmend.db'), { readonly: true, timeout: 10_000 });
    const gate = join(stateDir, 'go');
    const last =
      kind === 'shell'
        ? { id: 'n99', type: 'shell', params: { command: `test -f ${gate}` } }
        : { id: 'n99', type: 'transform', params: { expression: '$error("not yet")', input: '${n98.result}' } };
    const workflow = { ...chain(100), nodes: [...chain(100).nodes.slice(0, 99), last] };
    const resumeBody = kind === 'shell' ? '{}' : JSON.stringify({ workflow: chain(100) });
    const read = database.prepare<[string], { status: string; created: number; updated: number }>(
      "SELECT json_extract(body, '$.status') AS status, created_at AS created, json_extract(body, '$.updatedAt') AS updated FROM runs WHERE run_id = ?",
    );
    const resumedAt = database.prepare<[string], { at: number }>(
      "SELECT json_extract(body, '$.at') AS at FROM events WHERE run_id = ? AND json_extract(body, '$.type') = 'run_resumed'",
    );
    const settled = async (runId: string, status: string) => {
      for (;;) {
        const row = read.get(runId);
        if (row && row.status !== 'running') {
          if (row.status !== status) throw new Error(`run ${runId} ended ${row.status}, expected ${status}`);
          return row;
        }
        await new Promise((r) => setTimeout(r, 5));
      }
    };
    const ratios: number[] = [];
    const firsts: number[] = [];
    const resumes: number[] = [];
    let seed = 12345;
    for (let round = 0; round <= RESUMES; round += 1) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const shift = seed % 41;
      if (shift > 0) await settled(await startRun(api, chain(shift)), 'succeeded');
      rmSync(gate, { force: true });
      const runId = await startRun(api, workflow);
      const failed = await settled(runId, 'failed');
      writeFileSync(gate, '');
      const response = await fetch(`${api}/runs/${runId}/resume`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: resumeBody });
      if (response.status !== 202) throw new Error(`resume answered ${response.status}: ${await response.text()}`);
      const done = await settled(runId, 'succeeded');
      const claimed = resumedAt.get(runId)?.at as number;
      if (round === 0) continue; // warm-up
      firsts.push(failed.updated - failed.created);
      resumes.push(done.updated - claimed);
      ratios.push((done.updated - claimed) / (failed.updated - failed.created));
    }
    database.close();
    return { ratio: median(ratios), meanRatio: ratios.reduce((a, b) => a + b, 0) / ratios.length, firstMs: median(firsts), resumeMs: median(resumes) };
  } finally {
    server.kill('SIGTERM');
    await new Promise((done) => server.once('exit', done));
    rmSync(stateDir, { recursive: true, force: true });
  }
};

const show = (r: Round): string =>
  `${r.perSecond.toFixed(0)} runs/s, to finish p50 ${r.p50.toFixed(0)} ms p99 ${r.p99.toFixed(0)} ms, ` +
  `CPU ${r.cpuMs.map((ms) => ms.toFixed(0)).join('+')} ms (${(r.cpuMs.reduce((a, b) => a + b, 0) / (RUNS * STEPS)).toFixed(2)} ms/step), ` +
  `main thread ${r.mainCpuMs.toFixed(0)} ms (${(r.mainCpuMs / RUNS).toFixed(2)} ms/run), peak RSS ${r.peakRssMb.toFixed(0)} MiB (high-water ${r.hwmMb.map((mb) => mb.toFixed(0)).join('+')}), ` +
  `API GET while runs are driven p50 ${r.apiP50.toFixed(1)} ms max ${r.apiMax.toFixed(0)} ms (${r.apiCount}), load ${r.load.toFixed(1)}`;

console.log(
  `machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} when started; ` +
    `${RUNS} runs of ${STEPS} ${NODE} steps started at once after ${WARMUP} warm-up runs, ${ROUNDS} rounds${SERVE_ARGS.length ? `, serve ${SERVE_ARGS.join(' ')}` : ''}` +
    `${CONNECTIONS === undefined ? '' : `, POSTs over ${CONNECTIONS} connections`}`,
);
const rounds = new Map<string, Round[]>(BINS.map((b) => [b.label, []]));
for (let round = 0; round < ROUNDS; round += 1) {
  for (const { label, bin, args } of BINS) {
    const r = await measure(bin, args);
    rounds.get(label)?.push(r);
    console.log(`round ${round + 1} ${label}: ${show(r)}`);
  }
}
for (const { label, bin } of ROUNDS > 0 ? BINS : []) {
  const rs = rounds.get(label) ?? [];
  const pick = (f: (r: Round) => number) => median(rs.map(f));
  const cpu = pick((r) => r.cpuMs.reduce((a, b) => a + b, 0));
  console.log(
    `${label} (median of ${rs.length}; ${bin}): ${pick((r) => r.perSecond).toFixed(0)} runs/s, p50 ${pick((r) => r.p50).toFixed(0)} ms, ` +
      `p99 ${pick((r) => r.p99).toFixed(0)} ms, CPU ${cpu.toFixed(0)} ms (${(cpu / (RUNS * STEPS)).toFixed(2)} ms/step), main thread ${pick((r) => r.mainCpuMs).toFixed(0)} ms, peak RSS ${pick((r) => r.peakRssMb).toFixed(0)} MiB, ` +
      `API GET p50 ${pick((r) => r.apiP50).toFixed(1)} ms, max ${pick((r) => r.apiMax).toFixed(0)} ms; load ${rs.map((r) => r.load.toFixed(1)).join('/')}`,
  );
}
const RESUME_KINDS = { shell: 'a shell node that fails until a file exists, same workflow', patch: 'a failing transform, resumed with the fixed workflow' };
for (const kind of ['shell', 'patch'] as const) {
  for (const { label, bin, args } of RESUMES > 0 ? BINS : []) {
    const load = loadavg()[0]?.toFixed(1);
    const r = await measureResume(bin, args, kind);
    console.log(
      `${label}: resume through serve of a 100-node run failed at its last node (${RESUME_KINDS[kind]}): ${r.ratio.toFixed(3)} of the first run's work (mean ${r.meanRatio.toFixed(3)}; target <= 0.1);` +
        ` first run ${r.firstMs.toFixed(0)} ms, resume ${r.resumeMs.toFixed(0)} ms (medians of ${RESUMES}, on serve's clock; load ${load})`,
    );
  }
}
console.log(`load average when done: ${loadavg()[0]?.toFixed(1)}`);
pool?.destroy();
