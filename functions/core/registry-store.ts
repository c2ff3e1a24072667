import type { Workflow } from './ir.ts';
import type { IdempotencyRecord, Schedule, WorkflowSummary, WorkflowVersion } from './registry-model.ts';

/** The outcome of claiming an idempotency key: this caller won, or the run an earlier caller started. */
export type IdempotencyClaim = { claimed: true } | { claimed: false; runId: string };

/**
 * Registered workflows, their schedules and idempotency keys: single-item conditional writes only, so
 * of two writers at once exactly one wins. Rejects with `StoreError` when the store misbehaves.
 */
export interface RegistryStore {
  /** Stores `workflow` as the next version of `name` (1 for a new name); versions are never changed. */
  putWorkflow(name: string, workflow: Workflow, now: number): Promise<WorkflowVersion>;
  /** The given version, or the latest when `version` is undefined; undefined once the name is deleted. */
  getWorkflow(name: string, version?: number): Promise<WorkflowVersion | undefined>;
  /** Every registered name with its latest version, by name. */
  listWorkflows(): Promise<WorkflowSummary[]>;
  /** Deletes every version of `name` and its schedule; false when there was none. */
  deleteWorkflow(name: string): Promise<boolean>;
  /** Creates or replaces the schedule of `schedule.workflowName`. */
  putSchedule(schedule: Schedule): Promise<void>;
  getSchedule(workflowName: string): Promise<Schedule | undefined>;
  /** Every schedule, by workflow name. */
  listSchedules(): Promise<Schedule[]>;
  /** False when there was none. */
  deleteSchedule(workflowName: string): Promise<boolean>;
  /**
   * Binds `key` to `runId` unless an unexpired record holds it: a conditional insert, so of concurrent
   * claims exactly one gets `claimed: true` and the others the winner's run id.
   */
  claimIdempotencyKey(record: IdempotencyRecord, now: number): Promise<IdempotencyClaim>;
}
