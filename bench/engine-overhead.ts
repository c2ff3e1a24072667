// Engine overhead on the embedded default, in the shape the peers are measured in (issue 13):
//  - per node: chains of 200 and 1,000 no-op transform nodes through the local host (the real ASL in
//    aws-local-stepfunctions, the real handlers, SQLite on disk with synchronous FULL), less the same
//    runner called directly in a loop; and the CPU per node of the runs on SQLite (process.cpuUsage: every
//    thread of the process, the runner's included); each size's first run is measured apart (cold: the JIT and
//    the heap's growth for that size), then BENCH_ROUNDS rounds (medians: the steady cost a step);
//  - start-up: `flowmend validate` / `flowmend run examples/hello.json` as child processes (the bin run as a
//    program, from the bundles);
//  - resume: a 100-node run that failed at its last node, resumed; its work is wall time less that of
//    `flowmend status` of the same run (start-up plus a read), as a fraction of the first run's;
//  - peak memory (max RSS) of a process that runs a 1,000-node chain;
//  - observability: the 200-node chain with an OTLP exporter configured (spans and metrics to a receiver
//    on 127.0.0.1, the batch exported at the end of each run), alternating with the same host without one.
// Prints figures and the machine; no assertions (see README).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openSqlite } from '../functions/adapters/sqlite-database.ts';
import { SqliteRunStore } from '../functions/adapters/sqlite-run-store.ts';
import { MemoryRunStore, type WorkflowInput, WorkflowSchema } from '../functions/core/index.ts';
import { LocalHost } from '../functions/hosts/local/local-host.ts';
import { loadTelemetry } from '../functions/hosts/telemetry/load-telemetry.ts';
import { telemetryConfigFrom } from '../functions/hosts/telemetry/telemetry-config.ts';
import { transformRunner } from '../functions/nodes/transform.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(REPO, 'bin', 'flowmend.cjs');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SIZES = (process.env.BENCH_NODES ?? '200,1000').split(',').map(Number);

const chain = (nodes: number, last?: WorkflowInput['nodes'][number]): WorkflowInput => ({
  nodes: Array.from({ length: nodes }, (_, i) =>
    i === nodes - 1 && last ? last : { id: `n${i}`, type: 'transform', params: { expression: '$', input: i === 0 ? 0 : `\${n${i - 1}.result}` } },
  ),
  edges: Array.from({ length: nodes - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});

/** The middle value; of an even count, the mean of the two middle ones (of 2 rounds, not the slower). */
const median = (xs: number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};
const timed = async (work: () => Promise<unknown>): Promise<number> => {
  const t = performance.now();
  await work();
  return performance.now() - t;
};

const direct = async (nodes: number): Promise<void> => {
  let value: unknown = 0;
  for (let i = 0; i < nodes; i += 1) {
    const r = await transformRunner.run({ expression: '$', input: value }, { runId: 'bench', nodeId: `n${i}`, seq: i + 1, cacheKey: 'k' });
    if (r.kind !== 'ok') throw new Error('transform failed');
    value = r.outputs.result;
  }
};

const runThrough = async (host: LocalHost, nodes: number): Promise<void> => {
  const report = await host.start({ workflow: WorkflowSchema.parse(chain(nodes)), workflowName: 'bench', params: {}, repairEnabled: false, maxRepairs: 0 });
  if (!report.success || report.metrics.nodes_executed !== nodes) throw new Error(`run failed: ${JSON.stringify(report.errors)}`);
};

const timedSpawn = (args: string[]): number => {
  const t = performance.now();
  spawnSync(process.execPath, args, { cwd: REPO });
  return performance.now() - t;
};

/** The bin run as a program, as `flowmend` and `npx flowmend` run it (its shell line picks Node's environment). */
const cli = (args: string[]): { ms: number; stdout: string; code: number | null } => {
  const t = performance.now();
  const out = spawnSync(BIN, args, { cwd: REPO, encoding: 'utf8' });
  return { ms: performance.now() - t, stdout: out.stdout, code: out.status };
};

const stateDir = mkdtempSync(join(tmpdir(), 'flowmend-bench-'));
try {
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} when started`);

  // What one commit costs on this disk (WAL, synchronous FULL: one fsync), so the figures below can be read.
  const probe = openSqlite(join(stateDir, 'probe'));
  probe.db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)');
  const put = probe.db.prepare('INSERT OR REPLACE INTO t VALUES (?, ?)');
  const commit = probe.db.transaction((k: number) => put.run(k, 'x'.repeat(2000)));
  const commitMs = median(
    Array.from({ length: 5 }, () => {
      const t = performance.now();
      for (let i = 0; i < 50; i += 1) commit(i);
      return (performance.now() - t) / 50;
    }),
  );
  probe.db.close();
  console.log(`SQLite commit on this disk (WAL, synchronous FULL): ${commitMs.toFixed(3)} ms`);

  const sqlite = SqliteRunStore.open(join(stateDir, 'runs'));
  const onDisk = new LocalHost({ store: sqlite });
  const inMemory = new LocalHost({ store: new MemoryRunStore() });
  await direct(50);
  await runThrough(inMemory, 50); // warm-up: JIT, jsonata cache, ASL
  await runThrough(onDisk, 50);
  let nodesOnDisk = 50;
  for (const nodes of SIZES) {
    const d: number[] = [];
    const disk: number[] = [];
    const diskCpu: number[] = [];
    const mem: number[] = [];
    // The first run of a size in this process also compiles (JIT) and grows the heap for it: measured apart,
    // as the cold figure; the rounds after it are the steady cost a step.
    const cold = process.cpuUsage();
    await runThrough(onDisk, nodes);
    const coldCpu = process.cpuUsage(cold);
    nodesOnDisk += nodes;
    await runThrough(inMemory, nodes);
    for (let round = 0; round < ROUNDS; round += 1) {
      d.push(await timed(() => direct(nodes)));
      const cpu = process.cpuUsage();
      disk.push(await timed(() => runThrough(onDisk, nodes)));
      const used = process.cpuUsage(cpu);
      diskCpu.push((used.user + used.system) / 1000);
      nodesOnDisk += nodes;
      mem.push(await timed(() => runThrough(inMemory, nodes)));
    }
    const per = (ms: number) => ms / nodes;
    const base = per(median(d));
    console.log(
      `${nodes} nodes (median of ${ROUNDS}): engine overhead on SQLite ${(per(median(disk)) - base).toFixed(3)} ms/node` +
        ` (in memory ${(per(median(mem)) - base).toFixed(3)}; direct runner ${base.toFixed(3)}) -> target < 1 ms: ${per(median(disk)) - base < 1 ? 'met' : 'NOT met'};` +
        ` CPU on SQLite ${per(median(diskCpu)).toFixed(3)} ms/node (the process's threads, runner included; its first run ${per((coldCpu.user + coldCpu.system) / 1000).toFixed(3)})`,
    );
  }
  // With an exporter: every span and metric of the run goes out over OTLP/HTTP to a receiver that reads and drops it.
  let received = 0;
  const receiver = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const telemetry = await loadTelemetry(telemetryConfigFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }, 'cli'));
  if (!telemetry) throw new Error('no telemetry loaded');
  const plainStore = SqliteRunStore.open(join(stateDir, 'plain'));
  const tracedStore = SqliteRunStore.open(join(stateDir, 'traced'));
  const plain = new LocalHost({ store: plainStore });
  const traced = new LocalHost({ store: tracedStore, telemetry });
  await runThrough(plain, 50);
  await runThrough(traced, 50);
  await telemetry.flush();
  received = 0;
  const observedNodes = SIZES[0] ?? 200;
  const without: number[] = [];
  const withExporter: number[] = [];
  for (let round = 0; round < Math.max(ROUNDS, 5); round += 1) {
    without.push(await timed(() => runThrough(plain, observedNodes)));
    // The run and the export of what it made: a CLI run flushes before it exits.
    withExporter.push(
      await timed(async () => {
        await runThrough(traced, observedNodes);
        await telemetry.flush();
      }),
    );
  }
  const perNode = (ms: number[]) => median(ms) / observedNodes;
  console.log(
    `observability, ${observedNodes} nodes on SQLite (median of ${without.length}, alternating): ${perNode(without).toFixed(3)} ms/node without an exporter,` +
      ` ${perNode(withExporter).toFixed(3)} ms/node with OTLP traces and metrics (+${(perNode(withExporter) - perNode(without)).toFixed(3)}, export included);` +
      ` ${(received / 1024 / without.length).toFixed(0)} KB of OTLP per run`,
  );
  await telemetry.shutdown();
  receiver.close();
  plainStore.close();
  tracedStore.close();

  const { reads, writes } = onDisk.store.counters;
  console.log(
    `store requests per node on SQLite: ${(reads / nodesOnDisk).toFixed(3)} reads, ${(writes / nodesOnDisk).toFixed(3)} writes (each write one transaction); state transitions per node ${(onDisk.stats.transitions / nodesOnDisk).toFixed(2)}`,
  );
  sqlite.close();

  // Start-up, through the real bin (the bundle when built).
  const cliState = join(stateDir, 'cli');
  const hello = join(REPO, 'examples', 'hello.json');
  cli(['validate', hello]);
  cli(['run', hello, '--state-dir', cliState]);
  const validateMs = median(Array.from({ length: 9 }, () => cli(['validate', hello]).ms));
  const runMs = median(Array.from({ length: 9 }, () => cli(['run', hello, '--state-dir', cliState]).ms));
  // Node's own start-up in the same environment (NODE_EXTRA_CA_CERTS, when set, makes Node load a CA bundle first:
  // the bin drops it for `validate` only), to subtract.
  const emptyMs = median(Array.from({ length: 9 }, () => timedSpawn(['-e', '0'])));
  console.log(
    `start-up: flowmend validate examples/hello.json ${validateMs.toFixed(0)} ms (target < 150), flowmend run examples/hello.json ${runMs.toFixed(0)} ms (target < 400);` +
      ` node -e 0 alone ${emptyMs.toFixed(0)} ms here${process.env.NODE_EXTRA_CA_CERTS ? ' (with NODE_EXTRA_CA_CERTS set, which the bin drops for validate and local reads)' : ''}`,
  );

  // Resume of a 100-node run that failed at its last node.
  const gate = join(stateDir, 'go');
  const failing = join(stateDir, 'fail-last.json');
  writeFileSync(failing, JSON.stringify(chain(100, { id: 'n99', type: 'shell', params: { command: `test -f ${gate}` } })));
  const ratios: number[] = [];
  const walls: number[][] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    rmSync(gate, { force: true });
    const first = cli(['run', failing, '--no-repair', '--output-format', 'json', '--state-dir', cliState]);
    const runId = (JSON.parse(first.stdout) as { run_id: string }).run_id;
    // `status` with `--store sqlite` (the default, said): the bin then keeps NODE_EXTRA_CA_CERTS, as it does for
    // `resume`, so the subtraction takes away the same start-up. Without the flag, `status` starts ~40 ms
    // sooner here (the bin drops the CA bundle for a local read), a start-up `resume` does not have.
    const status = cli(['status', runId, '--store', 'sqlite', '--state-dir', cliState]);
    writeFileSync(gate, '');
    const resumed = cli(['resume', runId, '--output-format', 'json', '--state-dir', cliState]);
    if (first.code !== 1 || resumed.code !== 0) throw new Error(`resume bench: run exited ${first.code}, resume ${resumed.code}`);
    ratios.push((resumed.ms - status.ms) / (first.ms - status.ms));
    // What the shell node itself took in the resume (its runner's own timing: the fork of `sh`, its run and exit).
    const steps = (JSON.parse(resumed.stdout) as { steps: { node_id: string; cached: boolean; duration_ms: number }[] }).steps;
    const rerun = steps.find((s) => s.node_id === 'n99' && !s.cached)?.duration_ms ?? Number.NaN;
    walls.push([first.ms, status.ms, resumed.ms, rerun]);
  }
  const [firstMs, statusMs, resumeMs, rerunMs] = [0, 1, 2, 3].map((i) => median(walls.map((w) => w[i] as number)));
  console.log(
    `resume of a 100-node run failed at its last node: ${median(ratios).toFixed(3)} of the first run's work (target < 0.1);` +
      ` medians: first run ${firstMs?.toFixed(0)} ms, status ${statusMs?.toFixed(0)} ms, resume ${resumeMs?.toFixed(0)} ms,` +
      ` of which the shell node's own run ${rerunMs?.toFixed(0)} ms`,
  );

  // Peak memory: `flowmend run` of a 1,000-node chain, with a preload that prints the process's max RSS at exit.
  const probe1000 = join(stateDir, 'chain-1000.json');
  writeFileSync(probe1000, JSON.stringify(chain(1000)));
  const rssProbe = join(stateDir, 'rss-probe.mjs');
  writeFileSync(rssProbe, "process.on('exit', () => process.stderr.write(`maxRSS=${process.resourceUsage().maxRSS}\\n`));\n");
  const peak = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(rssProbe).href, BIN, 'run', probe1000, '--output-format', 'json', '--state-dir', cliState],
    { cwd: REPO, encoding: 'utf8' },
  );
  const maxRssKb = Number(/maxRSS=(\d+)/.exec(peak.stderr)?.[1]);
  console.log(`peak memory of flowmend run with 1,000 nodes: ${(maxRssKb / 1024).toFixed(0)} MB RSS (target < 150)`);
  console.log(`load average when done: ${loadavg()[0]?.toFixed(1)}`);
} finally {
  rmSync(stateDir, { recursive: true, force: true });
}
