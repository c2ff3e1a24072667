import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { beforeAll, describe, expect, it } from 'vitest';
import { maxOverlap } from '../support/overlap.ts';
import { callsNotAllowed, type DeployedStack, explain, type RunReport, scenarioDir, useDeployedStack } from './support/stack.ts';

/**
 * Flow control on the deployed stack (docs/flow-control.md): the keys' state in the runs' table (conditional
 * puts), a run over its limit `waiting` with its execution ended, a freed slot handed over by a one-time
 * Scheduler wake-up, and a rate-limited node held by the definition's RateWait state to its reserved second.
 */

type Waiting = RunReport & { waiting?: { kind: string; flow?: { key: string; limit?: number } } };

let stack: DeployedStack;
let mark = 0;
const dir = scenarioDir('flow');

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
  // One run first, alone, through a wait (the wake Lambda too): the emulator unpacks a function's bundle at its first
  // call, and two first calls at once race on the same directory (FileExistsError/FileNotFoundError on `.partial` in
  // scripts/emulator, a 500 to the execution, or a wake-up lost).
  const warm = await stack.start({
    workflow: {
      ir_version: '0.1.0',
      nodes: [
        { id: 'warm', type: 'shell', params: { command: 'echo warm' } },
        { id: 'pause', type: 'wait', params: { seconds: 1 } },
      ],
      edges: [{ from: 'warm', to: 'pause' }],
    },
  });
  await stack.waitFor(warm, ['succeeded', 'failed'], 120_000);
}, 180_000);
/** `<ms> start|end <who>` lines the shell nodes append (the Lambdas share the test's disk). */
const marks = async (file: string) =>
  existsSync(file)
    ? (await readFile(file, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [ns, what, who] = line.split(' ');
          return { at: Number(BigInt(ns as string) / 1_000_000n), what: what as string, who: who as string };
        })
    : [];

const stamp = (file: string, what: string, who: string) => `echo "$(date +%s%N) ${what} ${who}" >> ${file}`;

describe('flow control on the stack deployed to the AWS emulator', () => {
  it('6 runs with a run-level limit of 2: those over it wait with no execution open, never more than 2 run at any instant, all complete', async () => {
    const file = join(dir, 'concurrency.log');
    const workflow = {
      ir_version: '0.1.0',
      inputs: { n: { type: 'string' } },
      concurrency: { key: 'emulator-tenant', limit: 2 },
      nodes: [{ id: 'work', type: 'shell', params: { command: `${stamp(file, 'start', '${n}')}; sleep 3; ${stamp(file, 'end', '${n}')}` } }],
    };
    // One after the other: the emulator's API Gateway loses answers of Lambdas invoked six at once (its KeyError 'answer').
    const runIds: string[] = [];
    for (let i = 0; i < 6; i += 1) runIds.push(await stack.start({ workflow, params: { n: `r${i}` } }));
    const seen = await Promise.all(runIds.map((id) => stack.waitFor(id, ['waiting', 'succeeded', 'failed'], 60_000) as Promise<Waiting>));
    const waited = seen.filter((r) => r.status === 'waiting');
    expect(waited.length, JSON.stringify(seen.map((r) => r.status))).toBeGreaterThanOrEqual(1);
    expect(waited[0]?.waiting).toMatchObject({ kind: 'slot', flow: { key: 'emulator-tenant', limit: 2 } });
    // Nothing is open for it: its execution ended at the Waiting state (no Wait state, no Lambda holds the run).
    const waiter = waited[0]?.run_id as string;
    let running = true;
    for (let i = 0; i < 50 && running; i += 1) {
      const executions = (await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.outputs.ExpressStateMachineArn }))).executions ?? [];
      const mine = executions.filter((e) => e.name?.includes(waiter));
      running = mine.length === 0 || mine.some((e) => e.status === 'RUNNING');
      if (running && (await stack.api.call<RunReport>('GET', `/runs/${waiter}`)).status !== 'waiting') break;
      if (running) await new Promise((done) => setTimeout(done, 200));
    }
    if ((await stack.api.call<RunReport>('GET', `/runs/${waiter}`)).status === 'waiting') expect(running).toBe(false);
    const done = await Promise.all(runIds.map((id) => stack.waitFor(id, ['succeeded', 'failed', 'cancelled'], 180_000)));
    for (const report of done) expect(report, explain(report)).toMatchObject({ status: 'succeeded' });
    const spans = new Map<string, { start: number; end: number }>();
    for (const m of await marks(file)) {
      const span = spans.get(m.who) ?? { start: 0, end: 0 };
      if (m.what === 'start') span.start = m.at;
      else span.end = m.at;
      spans.set(m.who, span);
    }
    expect(spans.size).toBe(6);
    expect(maxOverlap([...spans.values()])).toBeLessThanOrEqual(2);
  });

  it('a rate limit of 2 starts per 2 s over 6 runs: the nodes start no sooner than the window lets them, in whole seconds', async () => {
    const file = join(dir, 'rate.log');
    const workflow = {
      ir_version: '0.1.0',
      inputs: { n: { type: 'string' } },
      nodes: [{ id: 'call', type: 'shell', rate_limit: { key: 'emulator-api', limit: 2, period_s: 2 }, params: { command: stamp(file, 'start', '${n}') } }],
    };
    const began = Date.now();
    const runIds: string[] = [];
    for (let i = 0; i < 6; i += 1) runIds.push(await stack.start({ workflow, params: { n: `r${i}` } }));
    const done = await Promise.all(runIds.map((id) => stack.waitFor(id, ['succeeded', 'failed', 'cancelled'], 120_000)));
    for (const report of done) expect(report, explain(report)).toMatchObject({ status: 'succeeded' });
    const starts = (await marks(file)).map((m) => m.at).sort((a, b) => a - b);
    expect(starts).toHaveLength(6);
    // The window's reservations, sorted, are 2 s apart two places on, and the first is after the test began. Step
    // Functions waits to a whole-second timestamp exactly; the emulator's Wait waits `int(delta.total_seconds())`
    // (moto's timestamp.py), up to a second short, so here the i-th start is no sooner than that less a second.
    for (const [i, at] of starts.entries()) expect(at).toBeGreaterThanOrEqual(began + 2000 * Math.floor(i / 2) - 1000);
    const delayed = done.filter((r) => ((r as RunReport & { metrics?: { flow?: { waits: number } } }).metrics?.flow?.waits ?? 0) > 0);
    expect(delayed.length).toBeGreaterThanOrEqual(1);
  });

  it('made every AWS call under the IAM policies of the template', async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
