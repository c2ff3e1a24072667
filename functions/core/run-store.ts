import type { IrVersionItem, NodeRecord, RunEvent, RunItem } from './run-model.ts';
import { wakeAt } from './waits/wait-model.ts';

/** Conditions a run write is made under; a failed condition rejects with `StaleRunError`. */
export interface RunWriteCondition {
  /** The run's owner id must be this. */
  ownerId?: string;
  /** The run's `seq` must be this. */
  seq?: number;
  /**
   * The run's `eventSeq` must be this: no step was committed since the run was read (every commit
   * writes an event, even one that leaves `seq` alone, such as a failed validation).
   */
  eventSeq?: number;
  /** The run must not exist (create). */
  notExists?: boolean;
}

/** What one engine step writes at its commit point: its events, step records due for their own items, and the run item. */
export interface AdvanceCommit {
  /**
   * Workflow versions written before the rest (a new run's version 0): in the same transaction where the store
   * has one, else first, so that no run item ever names a version that is not there.
   */
  irVersions?: readonly IrVersionItem[];
  events: readonly RunEvent[];
  records: readonly NodeRecord[];
  run: RunItem;
  /** Guards the run item; when it fails nothing of the commit is written. */
  condition: RunWriteCondition;
  /**
   * The node visits this step recorded, for observers (run-observations.ts): stores write records through
   * `run` (its pending records) and `records`, and ignore this.
   */
  visits?: readonly NodeRecord[];
  /** When the engine began this step and committed it, for observers (its own time: the reads of records, a walk, a validation, up to the commit). */
  step?: { startedAt: number; committedAt: number };
}

/**
 * Durable run state: one table, single-item conditional writes, no transactions.
 * Rejects with `StaleRunError` when a condition fails, `StoreError` when the store misbehaves.
 */
export interface RunStore {
  /** Writes the run item; `condition` guards against a concurrent writer. */
  putRun(run: RunItem, condition: RunWriteCondition): Promise<void>;
  getRun(runId: string): Promise<RunItem | undefined>;
  /** Writes an IR version once; writing the same version again is a no-op when identical. */
  putIrVersion(item: IrVersionItem): Promise<void>;
  getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined>;
  /** Writes a step record; with `expectStatus`, only over a record in that status (or absent when null). */
  putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void>;
  /**
   * Writes records the run item already holds (so they are durable) as their own items, in as few
   * requests as the store allows; unconditional, so writing the same records again is harmless.
   */
  putRecords(steps: readonly NodeRecord[]): Promise<void>;
  /** Records of the given steps, in any order; missing ones are left out. */
  getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]>;
  /** Every step of a run, by seq; with `afterSeq`, only those after it (what a follower has not seen yet). */
  listRecords(runId: string, afterSeq?: number): Promise<NodeRecord[]>;
  /** Appends events; an event with a key already written is overwritten (same content on a retry). */
  appendEvents(events: readonly RunEvent[]): Promise<void>;
  /** Events of a run in key order, after `afterKey` when given. */
  listEvents(runId: string, afterKey?: string): Promise<RunEvent[]>;
  /**
   * Optional: writes a step's events, records and run item as one atomic commit (all or nothing, the run
   * item's condition guarding all of it). Stores without transactions leave it out; `commitAdvance` in
   * advance-commit.ts then makes the same writes one by one, in the order that keeps them safe.
   */
  commitAdvance?(commit: AdvanceCommit): Promise<void>;
  /** Most recent runs first. */
  listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]>;
  /**
   * Waiting runs, the soonest to continue first (`wakeAt`: an answered wait at its answer, else at its
   * deadline; waits without one last); with `dueBy`, only those due by then. `serve` reads this on each tick.
   */
  listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]>;
}

/** `listWaiting` over runs already read (a store without an index of waiting runs filters its recent runs). */
export const waitingAmong = (runs: readonly RunItem[], options: { limit: number; dueBy?: number }): RunItem[] => {
  const due = (run: RunItem): number => (run.wait ? (wakeAt(run.wait) ?? Number.POSITIVE_INFINITY) : Number.POSITIVE_INFINITY);
  return runs
    .filter((run) => run.status === 'waiting' && (options.dueBy === undefined || due(run) <= options.dueBy))
    .sort((a, b) => due(a) - due(b))
    .slice(0, Math.max(0, options.limit));
};
