import type { Advance } from '../advance.ts';
import { RunNotFoundError, WaitNotOpenError } from '../errors.ts';
import type { RunItem } from '../run-model.ts';
import type { RunStore } from '../run-store.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import { answerWait } from '../waits/answer-wait.ts';
import type { Wakeups } from '../waits/pause.ts';
import type { FlowDeps } from './flow-step.ts';
import { changeFlow } from './flow-store.ts';
import { type Promoted, readSlots, releaseSlot, renewLease } from './slots.ts';

// Giving slots back, and waking the runs they go to: after a step's commit (settleFlow), at a cancel (cancel-run.ts).

type Hold = NonNullable<RunItem['holds']>[number];
/**
 * Wakes the runs a freed slot was handed to: the grant is written into the waiter's wait (durably: `serve`
 * continues an answered wait at its next tick, `resume` does too), then its wake-up is asked for at once.
 * A waiter that was cancelled or went on otherwise is skipped; its slot runs out after `grantMs`.
 */
export const wakeGranted = async (runs: RunStore, wakeups: Wakeups | undefined, promoted: readonly Promoted[], now: number): Promise<void> => {
  for (const waiter of promoted) {
    try {
      const { run } = await answerWait(runs, waiter.runId, { kind: 'grant', waitId: waiter.waitId }, now);
      await wakeups?.schedule({ runId: waiter.runId, waitId: waiter.waitId, at: now, mode: run.mode, reason: 'granted' });
    } catch (error) {
      if (!(error instanceof WaitNotOpenError) && !(error instanceof RunNotFoundError)) throw error;
    }
  }
};

/** Gives slots back after the commit that ended their use (a node recorded, a run ended), and wakes the runs they go to. */
export const releaseHolds = async (
  runs: RunStore,
  wakeups: Wakeups | undefined,
  flow: Pick<FlowDeps, 'store' | 'grantMs'>,
  holds: readonly Pick<Hold, 'key' | 'holder'>[],
  now: number,
): Promise<void> => {
  for (const hold of holds) {
    const promoted = await changeFlow(flow.store, hold.key, (body) => {
      const released = releaseSlot(readSlots(body), { holderId: hold.holder, now, grantMs: flow.grantMs });
      return { body: released.changed ? released.slots : undefined, result: released.promoted };
    });
    await wakeGranted(runs, wakeups, promoted, now);
  }
};

/**
 * What a cancelled run gives back: the slots it holds and its place in a queue (a run waiting for a slot),
 * as `{ key, holder }` for releaseHolds. Read before the cancel clears the run's wait and holds.
 */
export const slotsOfRun = (run: RunItem): Pick<Hold, 'key' | 'holder'>[] => {
  const held = (run.holds ?? []).map(({ key, holder }) => ({ key, holder }));
  const wait = run.wait;
  if (wait?.kind !== 'slot') return held;
  return [...held, { key: wait.storeKey, holder: wait.scope === 'run' ? run.runId : `${run.runId}#${wait.nodeId}` }];
};

/** A run that paused durably keeps its slots for as long as it waits: their leases run to its deadline (and a margin), or on while it has none. */
export const extendHolds = async (flow: FlowDeps, run: RunItem): Promise<void> => {
  const until = run.wait?.until === undefined ? null : run.wait.until + flow.leaseMarginMs;
  for (const hold of run.holds ?? []) {
    await changeFlow(flow.store, hold.key, (body) => ({ body: renewLease(readSlots(body), { holderId: hold.holder, until }), result: undefined }));
  }
};

/** The node holds of the visit being recorded leave the run item; they are given back once the step is committed. */
export const dropNodeHolds = (step: Advance): void => {
  const holds = step.run.holds;
  if (!holds?.some((h) => h.holder !== step.run.runId)) return;
  step.releases.push(...holds.filter((h) => h.holder !== step.run.runId));
  step.run.holds = holds.filter((h) => h.holder === step.run.runId);
};

const ENDED: ReadonlySet<RunItem['status']> = new Set(['succeeded', 'failed', 'interrupted', 'cancelled']);

/**
 * After a step's commit: the slots it is done with go back (a recorded node's, every slot of a run that
 * ended), and a run that paused keeps its own for as long as it waits. A failure here loses nothing: the
 * step is committed, and a slot not given back is freed when its lease runs out.
 */
export const settleFlow = async (step: Advance, outcome: AdvanceOutcome): Promise<void> => {
  const flow = step.deps.flow;
  const { run } = step;
  if (!flow || (step.releases.length === 0 && !run.holds?.length)) return;
  const now = step.deps.now();
  const ended = ENDED.has(run.status);
  try {
    await releaseHolds(step.deps.store, step.deps.wakeups, flow, ended ? [...step.releases, ...(run.holds ?? [])] : step.releases, now);
    if (!ended && outcome.kind === 'waiting') await extendHolds(flow, run);
  } catch {
    // Deliberately quiet: the leases are the recovery, and the run must not fail for a slot it already used.
  }
};
