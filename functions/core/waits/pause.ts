import type { Advance } from '../advance.ts';
import { cryptoIds } from '../ids.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import { describeWait, type Wait } from './wait-model.ts';

/** A wake-up of one wait of a run, due at `at` (epoch ms). */
export interface WakeRequest {
  runId: string;
  waitId: string;
  at: number;
  /** The run's state machine, which the wake-up starts the next execution of. */
  mode: 'express' | 'standard';
  /** A wake-up that is not the wait's deadline: a concurrency slot handed to it now (its own schedule, beside the deadline's). */
  reason?: 'granted';
}

/**
 * Delivers a wait's wake-up at its deadline: a one-time EventBridge Scheduler schedule on AWS. Scheduling
 * the same wait twice is harmless (the wake-up of a wait that is over does nothing). `serve` needs none:
 * it reads the due waits from its store on every tick.
 */
export interface Wakeups {
  schedule(request: WakeRequest): Promise<void>;
}

/**
 * Ends the execution with the run `waiting` (DESIGN 7b): the wait is in the run item, durably, before the
 * outcome is returned, and nothing runs until a wake-up or an answer continues it (claim-wake.ts). The
 * wake-up is scheduled first: if the commit then loses to a cancel, the stray wake-up finds no such wait.
 */
export const pauseRun = async (step: Advance, wait: Wait): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  if (run.parent) {
    // A child run is driven by its parent's execution, which cannot end while the child waits.
    return step.fail({
      ...(wait.nodeId ? { node_id: wait.nodeId } : {}),
      category: 'non_repairable',
      code: 'WAIT_IN_CHILD_RUN',
      message: `${describeWait(wait)}, but a nested workflow's run cannot wait: put the wait or the gate in the parent workflow`,
      fixable: false,
    });
  }
  if (wait.until !== undefined) await deps.wakeups?.schedule({ runId: run.runId, waitId: wait.id, at: wait.until, mode: run.mode });
  run.status = 'waiting';
  run.wait = wait;
  step.writes.event('run_waiting', {
    ...(wait.nodeId ? { nodeId: wait.nodeId } : {}),
    message: describeWait(wait),
    data: { kind: wait.kind, waitId: wait.id, ...(wait.until === undefined ? {} : { until: wait.until }) },
  });
  await step.writes.commit();
  return { kind: 'waiting', runId: run.runId, owner: step.owner, exec: step.exec, waitId: wait.id, waitKind: wait.kind };
};

/** A fresh id for a wait: a wake-up or an answer names it, so one meant for an earlier wait of the run does nothing. */
export const newWaitId = (step: Advance): string => `w${(step.deps.ids ?? cryptoIds).hex(6)}`;
