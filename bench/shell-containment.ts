// What ending a shell node's escaped processes costs (functions/nodes/process-groups.ts endMarked): one
// /proc listing and a read of /proc/<pid>/environ for each process started since the command began. A
// shell node running `true` is timed whole (the sweep included), then the sweep alone, alternated with
// the node, as each node's end runs it (since = the last pid given out, less 5), and the sweep of every
// process (since = 0, as for a command left by a crashed host). CPU time of this process beside wall
// time: on a loaded machine the wall time is mostly waiting for a core. Prints figures and the machine;
// no assertions. Linux (elsewhere the sweep finds nothing).
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { endMarked } from '../functions/nodes/process-groups.ts';
import { makeShellRunner } from '../functions/nodes/shell.ts';
import { ShellParamsSchema } from '../functions/nodes/shell-spec.ts';

const runner = makeShellRunner();
const params = ShellParamsSchema.parse({ command: 'true' });
const context = { runId: 'bench', nodeId: 'sh', seq: 1, cacheKey: 'k' };
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const lastPid = (): number => Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));

const timed = async (work: () => unknown): Promise<[number, number]> => {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await work();
  const used = process.cpuUsage(cpu);
  return [performance.now() - started, (used.user + used.system) / 1000];
};

const ROUNDS = 100;
const node: [number, number][] = [];
const recent: [number, number][] = [];
const every: [number, number][] = [];
for (let i = 0; i < ROUNDS; i += 1) {
  node.push(await timed(() => runner.run(params, context)));
  recent.push(await timed(() => endMarked('0'.repeat(24), lastPid() - 5)));
  if (i % 5 === 0) every.push(await timed(() => endMarked('0'.repeat(24), 0)));
}
const say = (what: string, samples: [number, number][]) =>
  console.log(`${what}: median ${median(samples.map((s) => s[0])).toFixed(2)} ms wall, ${median(samples.map((s) => s[1])).toFixed(3)} ms CPU`);
say(`shell node running 'true', sweep included (${ROUNDS})`, node);
say('sweep of the processes started since a node began', recent);
say(`sweep of every process (${readdirSync('/proc').filter((e) => /^\d+$/.test(e)).length} here)`, every);
console.log(
  `machine: ${cpus().length} x ${cpus()[0]?.model}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
