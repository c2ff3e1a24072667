import { describe, expect, it } from 'vitest';
import { ObservingRunStore } from '../../functions/adapters/observing-run-store.ts';
import { cancelRun, MemoryRunStore, markInterrupted, type RunObservation, WorkflowSchema } from '../../functions/core/index.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { aRun } from '../support/builders.ts';

const collector = () => {
  const seen: RunObservation[] = [];
  return { seen, observer: { observe: (o: readonly RunObservation[]) => void seen.push(...o) } };
};

/** What an observation is about, in a line: its kind and the node or status it names. */
const brief = (o: RunObservation): string => {
  switch (o.kind) {
    case 'node_visited':
      return `${o.kind} ${o.record.nodeId} ${o.record.status}${o.category ? ` ${o.category}` : ''}`;
    case 'run_stopped':
      return `${o.kind} ${o.status}`;
    case 'repair_ended':
      return `${o.kind} ${o.attempt.outcome}`;
    default:
      return o.kind;
  }
};

describe('ObservingRunStore', () => {
  it("tells what a run did, in order, from the engine's own writes", async () => {
    const { seen, observer } = collector();
    const host = new LocalHost({ store: new MemoryRunStore(), validateDefinition: false, telemetry: { observer, traced: false } });
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'echo a' } },
        { id: 'b', type: 'shell', params: { command: 'exit 3' } },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    const report = await host.start({ workflow, workflowName: 'observed', params: {}, repairEnabled: true, maxRepairs: 1 });
    expect(report.status).toBe('failed');
    // Engine steps are told only when they took long (here, however busy the machine is): test below.
    expect(seen.filter((o) => o.kind !== 'engine_step').map(brief)).toEqual([
      'run_created',
      'run_started',
      'node_visited a completed',
      'node_visited b failed execution_failure',
      'repair_started',
      'repair_ended failed',
      'run_stopped failed',
    ]);
    const ended = seen.find((o) => o.kind === 'repair_ended');
    expect(ended?.kind === 'repair_ended' && ended.attempt.startedAt).toBeLessThanOrEqual(ended?.at ?? 0);
  });

  it('tells the engine steps that took 20 ms or more, with the nodes a walk replayed', async () => {
    const { seen, observer } = collector();
    let clock = 0;
    // Every reading of the clock 10 ms later: each engine step spans several readings.
    const now = () => (clock += 10);
    const host = new LocalHost({ store: new MemoryRunStore(), validateDefinition: false, now, telemetry: { observer, traced: false } });
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'echo a' } },
        { id: 'b', type: 'shell', params: { command: 'exit 3' } },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    const report = await host.start({ workflow, workflowName: 'slow-steps', params: {}, repairEnabled: false, maxRepairs: 0 });
    await host.resume(report.run_id, { force: true });
    const steps = seen.filter((o) => o.kind === 'engine_step');
    expect(steps.length).toBeGreaterThan(0);
    for (const s of steps) expect(s.kind === 'engine_step' && s.at - s.startedAt).toBeGreaterThanOrEqual(20);
    expect(steps.some((s) => s.kind === 'engine_step' && s.replayed === 1)).toBe(true);
  });

  it('tells each try of a node with retry as a visit of its own, and the retry between them', async () => {
    const { seen, observer } = collector();
    const host = new LocalHost({ store: new MemoryRunStore(), validateDefinition: false, retryIntervalMs: 0, telemetry: { observer, traced: false } });
    const workflow = WorkflowSchema.parse({ nodes: [{ id: 'flaky', type: 'shell', params: { command: 'exit 3' }, retry: { max: 2, wait: 0 } }] });
    await host.start({ workflow, workflowName: 'retried', params: {}, repairEnabled: false, maxRepairs: 0 });
    const tries = seen.filter((o) => o.kind === 'node_visited' || o.kind === 'node_retrying');
    expect(tries.map((o) => (o.kind === 'node_visited' ? `visit ${o.record.attempt}` : `retrying after ${o.attempt} of ${o.max}`))).toEqual([
      'visit 1',
      'retrying after 1 of 2',
      'visit 2',
    ]);
  });

  it('tells a cancel, with the node it cut off, and an interrupted execution, from writes made outside the engine', async () => {
    const { seen, observer } = collector();
    const store = new ObservingRunStore(new MemoryRunStore(), observer);
    const current = { seq: 1, nodeId: 'slow', nodeType: 'shell', visit: 1, cacheKey: 'k', sideEffects: true, startedAt: 100 };
    await store.putRun(aRun({ runId: 'run-cancel', seq: 1, current }), { notExists: true });
    await cancelRun(store, 'run-cancel', 400);
    await store.putRun(aRun({ runId: 'run-died', updatedAt: 10 }), { notExists: true });
    await markInterrupted(store, 'run-died', { stoppedAt: 20, code: 'States.Timeout', message: 'timed out', now: 30 });
    expect(seen.map((o) => `${o.run.runId} ${brief(o)}`)).toEqual([
      'run-cancel run_created',
      'run-cancel node_visited slow interrupted',
      'run-cancel run_stopped cancelled',
      'run-died run_created',
      'run-died run_stopped interrupted',
    ]);
    const cut = seen.find((o) => o.kind === 'node_visited');
    expect(cut?.kind === 'node_visited' && [cut.record.startedAt, cut.record.finishedAt]).toEqual([100, 400]);
  });

  it('never fails a write for an observer that throws', async () => {
    const errors: unknown[] = [];
    const store = new ObservingRunStore(
      new MemoryRunStore(),
      {
        observe: () => {
          throw new Error('exporter broke');
        },
      },
      (error) => errors.push(error),
    );
    await store.putRun(aRun({ runId: 'run-ok' }), { notExists: true });
    expect(await store.getRun('run-ok')).toBeDefined();
    expect(errors).toEqual([new Error('exporter broke')]);
  });

  it('tells nothing of a write the store refused', async () => {
    const { seen, observer } = collector();
    const store = new ObservingRunStore(new MemoryRunStore(), observer);
    await store.putRun(aRun({ runId: 'run-once' }), { notExists: true });
    await expect(store.putRun(aRun({ runId: 'run-once' }), { notExists: true })).rejects.toThrow();
    expect(seen.map(brief)).toEqual(['run_created']);
  });
});
