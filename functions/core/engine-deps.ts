import type { BlobStore } from './blob-store.ts';
import type { EngineCache } from './engine-cache.ts';
import type { ExecutionLimits } from './execution-limits.ts';
import type { FlowDeps } from './flow/flow-step.ts';
import type { Ids } from './ids.ts';
import type { Limits } from './limits.ts';
import type { MemoStore } from './memo-store.ts';
import type { NodeCatalog } from './node-type.ts';
import type { RunStore } from './run-store.ts';
import type { CallbackSource } from './waits/callback-token.ts';
import type { Wakeups } from './waits/pause.ts';

/** What the engine runs with; the hosts build it (hosts/lambda/aws-deps.ts, hosts/local/local-host.ts). */
export interface EngineDeps {
  store: RunStore;
  /** Where large node outputs go; without it runners return every output inline. */
  blobs?: BlobStore | undefined;
  catalog: NodeCatalog;
  now: () => number;
  /** The process-local caches: one per host process, one per test that wants to observe them. */
  cache: EngineCache;
  /** Randomness (the run item's `rev`); `cryptoIds` when not given. */
  ids?: Ids;
  executionLimits?: ExecutionLimits;
  /**
   * How many node records the run item carries before they are written as their own items. 1 (the
   * default, for AWS) writes each record beside the run item; more saves requests where a request is
   * slow and capacity is free (the embedded store), at the price of a larger run item.
   */
  stepBatch?: number;
  /** pflow's memo cache: results reused across runs for `ttlS` seconds (memo-step.ts); none without it. */
  memo?: { store: MemoStore; ttlS: number } | undefined;
  /** Node visits and events one run may make (default: DEFAULT_LIMITS). */
  runLimits?: Pick<Limits, 'maxNodeVisits' | 'maxEvents' | 'maxBatchItems' | 'maxItemRecords'>;
  /** Schedules a waiting run's wake-up at its deadline (AWS); `serve` reads due waits from its store instead. */
  wakeups?: Wakeups;
  /** The key callback tokens are minted with and the URL callbacks reach (waits/callback-token.ts); none: no wait-for-event. */
  callbacks?: CallbackSource;
  /** Concurrency slots and rate windows shared by runs (docs/flow-control.md); a workflow that uses them fails without. */
  flow?: FlowDeps;
}
