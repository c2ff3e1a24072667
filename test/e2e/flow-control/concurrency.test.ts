import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSlots } from '../../../functions/core/flow/slots.ts';
import type { WorkflowInput } from '../../../functions/core/ir.ts';
import { parseWorkflow } from '../../../functions/core/parse-workflow.ts';
import type { RunReport } from '../../../functions/core/run-report.ts';
import { renderWaiting } from '../../../functions/hosts/cli/render-wait.ts';
import { killStrayChildren, spawnCli, writeWorkflow } from '../../support/cli-process.ts';
import { type FlowHost, maxOverlap, readMarks, startFlowHost } from './flow-host.ts';

/** A node that appends `<ns> start <who>`, sleeps, and appends `<ns> end <who>` to `log`. */
const marked = (id: string, log: string, who: string, sleepS: number) => ({
  id,
  type: 'shell',
  params: { command: `echo "$(date +%s%N) start ${who}" >> ${log}; sleep ${sleepS}; echo "$(date +%s%N) end ${who}" >> ${log}` },
});

const workflowOf = (input: WorkflowInput) => {
  const parsed = parseWorkflow(input);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.workflow;
};

/** Each `who`'s interval from its first start to its last end. */
const intervalsOf = (log: string) => {
  const byWho = new Map<string, { start: number; end: number }>();
  for (const m of readMarks(log)) {
    const span = byWho.get(m.who) ?? { start: Number.POSITIVE_INFINITY, end: Number.NEGATIVE_INFINITY };
    if (m.what === 'start') span.start = Math.min(span.start, m.at);
    else span.end = Math.max(span.end, m.at);
    byWho.set(m.who, span);
  }
  return byWho;
};

describe('concurrency limits across runs on the local host', () => {
  let dir: string;
  let flow: FlowHost;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fm-flow-'));
    flow = startFlowHost(join(dir, 'state'));
  });
  afterAll(async () => {
    killStrayChildren();
    await flow.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('50 runs started at once with a run-level limit of 2 on one key: never more than 2 at any instant, all 50 complete', async () => {
    const log = join(dir, 'fifty.log');
    const workflow = workflowOf({
      inputs: { customer: { type: 'string' }, n: { type: 'string' } },
      concurrency: { key: 'customer-${customer}', limit: 2 },
      nodes: [marked('first', log, '${n}', 0), marked('second', log, '${n}', 0)],
      edges: [{ from: 'first', to: 'second' }],
    });
    const reports = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        flow.host.start({ workflow, workflowName: 'fifty', params: { customer: 'acme', n: `r${i}` }, repairEnabled: false, maxRepairs: 0 }),
      ),
    );
    // Those that could not start at once paused for a slot (no execution waits), the others ran.
    const waited = reports.filter((r) => r.status === 'waiting');
    expect(waited.length).toBeGreaterThanOrEqual(40);
    expect(waited[0]?.waiting).toMatchObject({ kind: 'slot', node_id: 'first', flow: { key: 'customer-acme', scope: 'run', limit: 2, holders: 2 } });
    // What `flowmend status` and `flowmend runs --status waiting` print for it.
    expect(renderWaiting(waited[0] as RunReport)).toEqual([
      expect.stringMatching(/^⏸ Run waiting for a concurrency slot of 'customer-acme' \(limit 2, 2 holding, #\d+ in line\) before 'first'$/),
      expect.stringContaining('gives the slot back'),
    ]);
    const runs = await flow.settled(reports.map((r) => r.run_id));
    expect(runs.map((r) => r.status)).toEqual(Array(50).fill('succeeded'));
    const intervals = [...intervalsOf(log).values()];
    expect(intervals).toHaveLength(50);
    expect(maxOverlap(intervals)).toBe(2);
    expect(runs.reduce((n, r) => n + r.metrics.flowWaits, 0)).toBeGreaterThanOrEqual(waited.length);
    const report = await flow.host.report(waited[0]?.run_id as string);
    expect(report?.metrics.flow).toEqual({ waits: expect.any(Number), wait_ms: expect.any(Number) });
    expect(report?.metrics.flow?.wait_ms).toBeGreaterThan(0);
    // Every slot was given back: nobody holds the key, nobody waits for it.
    expect(readSlots((await flow.flow.getFlow('run/customer-acme'))?.body)).toMatchObject({ holders: [], waiters: [] });
  });

  it('a node-level limit holds its key for the node only, and different keys do not wait for each other', async () => {
    const log = join(dir, 'keys.log');
    const workflow = workflowOf({
      inputs: { customer: { type: 'string' }, n: { type: 'string' } },
      nodes: [
        { ...marked('call', log, '${n}', 0.6), concurrency: { key: 'api-${customer}', limit: 1 } },
        { id: 'after', type: 'shell', params: { command: 'echo done' } },
      ],
      edges: [{ from: 'call', to: 'after' }],
    });
    const start = (customer: string, n: string) =>
      flow.host.start({ workflow, workflowName: 'keys', params: { customer, n }, repairEnabled: false, maxRepairs: 0 });
    const [a1, a2, b1] = await Promise.all([start('a', 'a1'), start('a', 'a2'), start('b', 'b1')]);
    const runs = await flow.settled([a1, a2, b1].map((r) => r?.run_id as string));
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    const spans = intervalsOf(log);
    const [first, second] = [spans.get('a1'), spans.get('a2')].sort((x, y) => (x?.start ?? 0) - (y?.start ?? 0));
    // One key, limit 1: the second 'a' call starts after the first ended; 'b' ran beside the first.
    expect(second?.start).toBeGreaterThanOrEqual(first?.end ?? Number.POSITIVE_INFINITY);
    expect(spans.get('b1')?.start).toBeLessThan(first?.end ?? 0);
  });

  it("a SIGKILLed holder's slot is taken by the next run once its lease runs out, not before", async () => {
    const stateDir = join(dir, 'state');
    const marker = join(dir, 'holder-started');
    const workflow: WorkflowInput = {
      concurrency: { key: 'only-one', limit: 1 },
      nodes: [{ id: 'hold', type: 'shell', params: { command: `touch ${marker}; sleep 30`, timeout_s: 5 } }],
    };
    const holder = spawnCli(['run', writeWorkflow(dir, 'holder', workflow)], { stateDir, env: { FLOWMEND_FLOW_LEASE_MARGIN_S: '1' } });
    for (let i = 0; i < 300 && !existsSync(marker); i += 1) await new Promise((done) => setTimeout(done, 50));
    expect(existsSync(marker)).toBe(true);
    holder.child.kill('SIGKILL');
    await holder.done;
    const next = await flow.host.start({
      workflow: workflowOf({ ...workflow, nodes: [{ id: 'hold', type: 'shell', params: { command: 'echo mine' } }] }),
      workflowName: 'next',
      params: {},
      repairEnabled: false,
      maxRepairs: 0,
    });
    expect(next.status).toBe('waiting');
    expect(next.waiting).toMatchObject({ kind: 'slot' });
    const until = Date.parse(next.waiting?.until ?? '');
    // The lease: the node's worst case (its 5 s timeout with every retry) and the 1 s margin, from the holder's start.
    expect(until - Date.now()).toBeGreaterThan(20_000);
    // Before the lease runs out the waiter stays waiting; after it (the clock moved on, nothing sleeps) it runs.
    flow.skew(until - Date.now() - 3_000);
    await flow.tick();
    expect((await flow.store.getRun(next.run_id))?.status).toBe('waiting');
    flow.skew(until - Date.now() + 100);
    await flow.tick();
    const [done] = await flow.settled([next.run_id]);
    expect(done?.status).toBe('succeeded');
    flow.skew(0);
  });
});
