// The CLI's own costs (issue 30), each a fresh process of the bin on a state dir of its own, wall time from this
// process (start-up included): a 1-step workflow (`run`, one transform node), the README's example
// (`run examples/hello.json`), the first run of a 100-node chain of transform nodes whose last node, a shell
// command, fails until a file exists (BENCH_SAMPLES of them, with --no-repair: 100 commits each), and `status`
// then `resume` of each of those runs once the file is there.
// `resume` less `status` is what a resume costs over reading the same run (the target: under 25 ms).
// Alternate builds in one sitting: BENCH_BINS="main=/path/to/bin/flowmend.cjs,new=bin/flowmend.cjs" takes each
// measure of each label in turn, sample by sample. BENCH_SAMPLES (11). The commands get this process's environment
// (NODE_EXTRA_CA_CERTS included, where it is set, as a person's shell would pass it). Prints medians and the
// machine; no assertions.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchBins } from './bench-bins.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const BINS = benchBins(REPO);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 11);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

/** One command of the bin, timed whole; its JSON output parsed. */
const cli = (bin: string, args: string[], expectStatus: number): { ms: number; out: Record<string, unknown> } => {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const started = process.hrtime.bigint();
  const result = spawnSync(bin, [...args, '--output-format', 'json'], { cwd: REPO, env, encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (result.status !== expectStatus) throw new Error(`${bin} ${args.join(' ')} exited ${result.status}: ${result.stdout}${result.stderr}`);
  return { ms, out: JSON.parse(result.stdout) as Record<string, unknown> };
};

const dir = mkdtempSync(join(tmpdir(), 'flowmend-cli-bench-'));
try {
  const gate = join(dir, 'go');
  const oneStep = join(dir, 'one-step.json');
  writeFileSync(oneStep, JSON.stringify({ nodes: [{ id: 'a', type: 'transform', params: { expression: '1 + 1' } }], edges: [] }));
  const chain = join(dir, 'chain.json');
  writeFileSync(
    chain,
    JSON.stringify({
      nodes: [
        ...Array.from({ length: 99 }, (_, i) => ({ id: `n${i}`, type: 'transform', params: { expression: '$', input: i === 0 ? 0 : `\${n${i - 1}.result}` } })),
        { id: 'n99', type: 'shell', params: { command: `test -f ${gate}` } },
      ],
      edges: Array.from({ length: 99 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
    }),
  );
  const stateDir = (label: string) => join(dir, `state-${label}`);

  console.log(
    `machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} when started; ${SAMPLES} samples`,
  );
  const failed = new Map<string, string[]>(BINS.map((b) => [b.label, []]));
  const firstRuns = new Map<string, number[]>(BINS.map((b) => [b.label, []]));
  for (let i = 0; i < SAMPLES; i += 1) {
    for (const { label, bin } of BINS) {
      const { ms, out } = cli(bin, ['run', chain, '--no-repair', '--state-dir', stateDir(label)], 1);
      failed.get(label)?.push(String(out.run_id));
      firstRuns.get(label)?.push(ms);
    }
  }
  writeFileSync(gate, '');

  const times = new Map<string, Record<'oneStep' | 'hello' | 'status' | 'resume', number[]>>(
    BINS.map((b) => [b.label, { oneStep: [], hello: [], status: [], resume: [] }]),
  );
  for (let i = 0; i < SAMPLES; i += 1) {
    for (const { label, bin } of BINS) {
      const t = times.get(label);
      if (!t) continue;
      const runId = failed.get(label)?.[i] as string;
      t.oneStep.push(cli(bin, ['run', oneStep, '--state-dir', stateDir(label)], 0).ms);
      t.hello.push(cli(bin, ['run', 'examples/hello.json', '--state-dir', stateDir(label)], 0).ms);
      t.status.push(cli(bin, ['status', runId, '--state-dir', stateDir(label)], 0).ms);
      t.resume.push(cli(bin, ['resume', runId, '--state-dir', stateDir(label)], 0).ms);
    }
  }
  for (const { label, bin } of BINS) {
    const t = times.get(label);
    if (!t) continue;
    const [oneStepMs, helloMs, statusMs, resumeMs] = [t.oneStep, t.hello, t.status, t.resume].map(median) as [number, number, number, number];
    const firstMs = median(firstRuns.get(label) ?? []);
    console.log(
      `${label} (medians of ${SAMPLES}; ${bin}): 1-step run ${oneStepMs.toFixed(0)} ms, hello ${helloMs.toFixed(0)} ms, ` +
        `the 100-node run (its last node fails) ${firstMs.toFixed(0)} ms, its status ${statusMs.toFixed(0)} ms, resume ${resumeMs.toFixed(0)} ms, ` +
        `resume less status ${(resumeMs - statusMs).toFixed(0)} ms (target < 25)`,
    );
  }
  console.log(`load average when done: ${loadavg()[0]?.toFixed(1)}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
