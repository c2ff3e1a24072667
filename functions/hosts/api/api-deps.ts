import type { FlowStore, NodeCatalog, RegistryStore, RunLauncher, RunStore, Schedule } from '../../core/index.ts';
import type { StoreChanges } from './long-poll.ts';

/** Mirrors the registry's schedules into something that fires them (EventBridge Scheduler on AWS). */
export interface ScheduleSync {
  upsert(schedule: Schedule): Promise<void>;
  remove(workflowName: string): Promise<void>;
}

/** What the API app is built from: the same on AWS (DynamoDB, Step Functions) and in `flowmend serve`. */
export interface ApiDeps {
  store: RunStore;
  registry: RegistryStore;
  launcher: RunLauncher;
  /** Flow control's keys (docs/flow-control.md): a cancel gives its run's slots back, a start is debounced or kept single. */
  flow?: FlowStore;
  catalog: NodeCatalog;
  now: () => number;
  /** Largest request body accepted, in bytes (413 beyond). */
  bodyLimitBytes?: number;
  /** Absent locally: `serve` reads schedules from the registry on every tick. */
  scheduleSync?: ScheduleSync;
  /** Where an unexpected error is written in full (the client only gets a 500 without details). */
  logError?: (error: unknown) => void;
  /** Where file nodes of the runs started here read and write (`serve --workspace`); none on AWS, whose catalog has no file nodes. */
  workspace?: string;
  /** How often a long-poll re-reads the store, ms. */
  pollIntervalMs?: number;
  /** `serve`: this process's own writes, which wake a long-poll before its next read (none on AWS: the API's Lambda polls). */
  changes?: StoreChanges;
  /** Runs started here get a trace of their own when their request sent no traceparent (the host exports traces). */
  traced?: boolean;
}

/** 1 MiB: a workflow is a few KiB; API Gateway would cut at 10 MB and Lambda at 6 MB anyway. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;
