import { BatchStateSchema, ItemOfSchema, ItemRangeSchema } from './batch/batch-state.ts';
import { RepairApprovalSchema, WorkflowSchema } from './ir.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { LlmUsageSchema, NodeErrorSchema } from './node-type.ts';
import { RunTraceSchema } from './trace-context.ts';
import { WaitKindSchema, WaitOutcomeSchema, WaitSchema } from './waits/wait-model.ts';
import * as z from './zod.ts';

export const RunIdSchema = builtOnFirstUse(() => z.string().check(z.regex(/^[A-Za-z0-9_-]{6,64}$/, 'a run id is 6-64 letters, digits, _ or -')));
export type RunId = z.infer<typeof RunIdSchema>;

/** How a failure is filed for the user and the repair loop (DESIGN section 5). */
export const ErrorCategorySchema = builtOnFirstUse(() => z.enum(['non_repairable', 'execution_failure', 'transient', 'template', 'validation']));
export type ErrorCategory = z.infer<typeof ErrorCategorySchema>;

/** An error as the user sees it in `errors` / `warnings`. */
export const RunErrorSchema = builtOnFirstUse(() =>
  z.object({
    node_id: z.optional(z.string()),
    category: ErrorCategorySchema,
    code: z.string(),
    message: z.string(),
    fixable: z.boolean(),
    details: z.optional(z.record(z.string(), z.unknown())),
  }),
);
export type RunError = z.infer<typeof RunErrorSchema>;

/**
 * `cancelled`: stopped by a person (API or CLI). `interrupted`: an execution of the run died without
 * recording an end (a failed or timed-out execution, a continue that could not start). Nothing
 * advances either until it is resumed, like a failed run. `waiting`: paused for a time, an event or a
 * person (`RunItem.wait`, DESIGN 7b); no execution runs until a wake-up or an answer continues it.
 */
export const RunStatusSchema = builtOnFirstUse(() => z.enum(['running', 'waiting', 'succeeded', 'failed', 'cancelled', 'interrupted']));
export type RunStatus = z.infer<typeof RunStatusSchema>;

/**
 * Who may advance a run now: one execution. Locally the owner is a process (pid on host), alive while
 * that pid is; on AWS an execution ARN, alive while the execution runs. Every run write is conditional on it.
 */
export const OwnerSchema = builtOnFirstUse(() =>
  z.object({
    id: z.string(),
    pid: z.optional(z.int()),
    host: z.optional(z.string()),
    since: z.number(),
  }),
);
export type Owner = z.infer<typeof OwnerSchema>;

export const RunMetricsSchema = builtOnFirstUse(() =>
  z.object({
    nodesExecuted: z._default(z.int(), 0),
    nodesCached: z._default(z.int(), 0),
    llmInputTokens: z._default(z.int(), 0),
    llmOutputTokens: z._default(z.int(), 0),
    llmCostUsd: z._default(z.number(), 0),
    repairInputTokens: z._default(z.int(), 0),
    repairOutputTokens: z._default(z.int(), 0),
    repairCostUsd: z._default(z.number(), 0),
    /** Flow control (docs/flow-control.md): how often the run waited for a slot, a rate limit or a debounce, and for how long in all. */
    flowWaits: z._default(z.int(), 0),
    flowWaitMs: z._default(z.number(), 0),
  }),
);
export type RunMetrics = z.infer<typeof RunMetricsSchema>;

/**
 * One repair attempt, whatever came of it: `applied` (a new workflow version), `refused` (a proposal
 * broke a rule; `problems` are told to the next attempt), `failed` (no proposal could be made), `held`
 * (its version waits for a person's approval) or `rejected` (a person said no; the version is kept).
 * At most `maxRepairs` per run, each clipped, so the run item stays small.
 */
export const RepairAttemptSchema = builtOnFirstUse(() =>
  z.object({
    attempt: z.int().check(z.positive()),
    outcome: z.enum(['applied', 'refused', 'failed', 'held', 'rejected']),
    /** The workflow version the attempt repaired. */
    irVersion: z.int().check(z.nonnegative()),
    /** The version it wrote (applied). */
    version: z.optional(z.int().check(z.positive())),
    nodeId: z.optional(z.string()),
    /** Why: the repair's reason when applied, else why it was refused or failed. */
    reason: z.string(),
    problems: z.optional(z.array(z.string())),
    usage: z.optional(LlmUsageSchema),
    /** When the attempt went to the Repair state (the commit that started it). */
    startedAt: z.optional(z.number()),
    at: z.number(),
  }),
);
export type RepairAttempt = z.infer<typeof RepairAttemptSchema>;

/**
 * A child run's link to the workflow node that runs it: when the child ends, the parent's Advance records
 * that node (visit `seq`) from the child's outputs, mapped by `outputMapping`, or from its failure.
 */
export const ParentLinkSchema = builtOnFirstUse(() =>
  z.object({
    runId: RunIdSchema,
    nodeId: z.string(),
    seq: z.int().check(z.positive()),
    /** 1 for a child of a top-level run. */
    depth: z.int().check(z.positive()),
    /** The deepest nesting this child's own workflow nodes may reach (the smallest max_depth above it). */
    limit: z.optional(z.int().check(z.positive())),
    /** Hash of the child IR the parent's node held when the child last took it: a different one is adopted as a new version. */
    irKey: z.optional(z.string()),
    outputMapping: z.optional(z.record(z.string(), z.string())),
    errorAction: z._default(z.string(), 'error'),
    /** A child of one item of a batch over a workflow node: its end is that item's record (at `seq`), with this cache key. */
    item: z.optional(ItemOfSchema),
    cacheKey: z.optional(z.string()),
  }),
);
export type ParentLink = z.infer<typeof ParentLinkSchema>;

/** A child run a workflow node started (one per node visit, or per item of a batch visit). */
export const ChildRefSchema = builtOnFirstUse(() =>
  z.object({ nodeId: z.string(), visit: z.int().check(z.positive()), runId: RunIdSchema, index: z.optional(z.int().check(z.nonnegative())) }),
);
export type ChildRef = z.infer<typeof ChildRefSchema>;

/** The run item: one per run, read by every engine step. */
export const RunItemSchema = builtOnFirstUse(() =>
  z.object({
    runId: RunIdSchema,
    workflowName: z.string(),
    /** The registered workflow's version the run started from (runs of an inline workflow have none). */
    workflowVersion: z.optional(z.int().check(z.positive())),
    status: RunStatusSchema,
    irVersion: z.int().check(z.nonnegative()),
    params: z.record(z.string(), z.unknown()),
    /** The directory file nodes resolve relative paths against (the local host); recorded so a resume uses the same one. */
    workspace: z.optional(z.string()),
    createdAt: z.number(),
    updatedAt: z.number(),
    /** Highest step sequence number allocated so far (0 before the first node). */
    seq: z.int().check(z.nonnegative()),
    /** The step in flight, if any: RunNode was asked to run it. */
    current: z.optional(
      z.object({
        seq: z.int(),
        nodeId: z.string(),
        nodeType: z.string(),
        visit: z.int(),
        cacheKey: z.string(),
        sideEffects: z.boolean(),
        startedAt: z.number(),
        interrupted: z.optional(z.boolean()),
        repaired: z.optional(z.boolean()),
        /** The loop iteration this visit runs (a node with `loop`), from 1. */
        iteration: z.optional(z.int().check(z.positive())),
        /** The try of this visit (a node with `retry`), from 1. */
        attempt: z.optional(z.int().check(z.positive())),
        /** The visit's result came from the memo cache (another run's), not from its runner. */
        fromMemo: z.optional(z.boolean()),
      }),
    ),
    /** The last node recorded on the current path and the action it took: the next step routes from here. */
    cursor: z.optional(z.object({ nodeId: z.string(), action: z.string() })),
    /**
     * Records of the last nodes, carried by the run item (the commit point of a step) until they are
     * written as their own items, in batches beside a later write of the run item. Small records only.
     */
    pendingRecords: z._default(z.array(z.lazy(() => NodeRecordSchema)), []),
    /** Pending records up to this seq were sent to their own items by the commit that wrote this run item. */
    flushedThrough: z._default(z.int().check(z.nonnegative()), 0),
    /** Changes on every write: a payload carrying it proves that a cached copy of the run is current. */
    rev: z.optional(z.string()),
    /** Events written so far; the next event's key is derived from it. */
    eventSeq: z._default(z.int().check(z.nonnegative()), 0),
    /** Nodes changed by any repair of this run (shown as [repaired]). */
    repairedNodes: z._default(z.array(z.string()), []),
    /** Set by resume and by a repair: the next step walks from the start and replays what it can. */
    needsWalk: z.boolean(),
    /** Latest completed step of each node on the current path (templates read these). */
    latest: z.record(z.string(), z.int()),
    /** How many times each node was visited on the current path. */
    visits: z.record(z.string(), z.int()),
    repairEnabled: z.boolean(),
    /** pflow's `--no-cache`: this run reads no memo-cache entry (what it computes is still kept for later runs). */
    noCache: z.optional(z.boolean()),
    maxRepairs: z.int().check(z.nonnegative()),
    repairAttempts: z.int().check(z.nonnegative()),
    lastErrorSignature: z.optional(z.string()),
    /** Every repair attempt of the run, in order (the report's `repairs`). */
    repairs: z._default(z.array(RepairAttemptSchema), []),
    /** A repair the last execution had no time left for (Express): the next execution starts with it. */
    repairDue: z.optional(RunErrorSchema),
    /** The error that sent the run to repair, or that failed it. */
    lastError: z.optional(RunErrorSchema),
    warnings: z._default(z.array(RunErrorSchema), []),
    owner: z.optional(OwnerSchema),
    outputs: z.optional(z.record(z.string(), z.unknown())),
    metrics: RunMetricsSchema,
    /** Per-run choice of state machine on AWS. */
    mode: z._default(z.enum(['express', 'standard']), 'express'),
    /** Set on a child run: the parent run and its workflow node. */
    parent: z.optional(ParentLinkSchema),
    /** The child runs this run's workflow nodes started, for status and the report. */
    children: z.optional(z.array(ChildRefSchema)),
    /** The batch in flight (batch/batch-step.ts), if any. */
    batch: z.optional(BatchStateSchema),
    /** Item records allocated so far (their seqs count here, not as node visits). */
    itemRecords: z.optional(z.int().check(z.nonnegative())),
    /** The run's trace (trace-context.ts): when a caller sent a traceparent or the host exports traces. */
    trace: z.optional(RunTraceSchema),
    /** What a `waiting` run waits for, and until when (waits/wait-model.ts); kept with its answer until an execution continues it. */
    wait: z.optional(WaitSchema),
    /** Gated nodes approved in advance for this run (`--auto-approve`). */
    autoApprove: z.optional(z.array(z.string())),
    /** The run's own repair approval policy (`--repair-approval`), over the workflow's `repair.approval`. */
    repairApproval: z.optional(RepairApprovalSchema),
    /**
     * Concurrency slots the run holds (flow/flow-step.ts): the store's key, the holder's id, the node that
     * holds it (a node-level limit) and the lease as last renewed. The flow store is the truth; this says
     * what to renew and what to give back.
     */
    holds: z.optional(z.array(z.object({ key: z.string(), holder: z.string(), nodeId: z.optional(z.string()), expiresAt: z.nullable(z.number()) }))),
  }),
);
export type RunItem = z.infer<typeof RunItemSchema>;

export const NodeRecordStatusSchema = builtOnFirstUse(() => z.enum(['running', 'completed', 'failed', 'warning', 'interrupted']));
export type NodeRecordStatus = z.infer<typeof NodeRecordStatusSchema>;

/** One visit of one node. A node in a loop has one record per visit. */
export const NodeRecordSchema = builtOnFirstUse(() =>
  z.object({
    runId: RunIdSchema,
    seq: z.int().check(z.positive()),
    nodeId: z.string(),
    nodeType: z.string(),
    /** 1 for the first visit of this node on the path, 2 for the second, ... */
    visit: z.int().check(z.positive()),
    status: NodeRecordStatusSchema,
    cacheKey: z.string(),
    sideEffects: z.boolean(),
    irVersion: z.int().check(z.nonnegative()),
    action: z.optional(z.string()),
    outputs: z.optional(z.record(z.string(), z.unknown())),
    error: z.optional(NodeErrorSchema),
    usage: z.optional(LlmUsageSchema),
    startedAt: z.number(),
    finishedAt: z.optional(z.number()),
    durationMs: z.optional(z.number()),
    /** This visit re-runs a node whose earlier try was cut off by a crash. */
    interrupted: z.optional(z.boolean()),
    /** The node was changed by a repair before this visit. */
    repaired: z.optional(z.boolean()),
    /** This record is one item of a batch, not a node visit. */
    item: z.optional(ItemOfSchema),
    /** This record is a batch node's: its items' records are at `base`..`base + count - 1`. */
    batch: z.optional(ItemRangeSchema),
    /** An item copied from an earlier attempt of its batch (same cache key): it did not run again. */
    replayed: z.optional(z.boolean()),
    /** The loop iteration of this visit (a node with `loop`), and whether the loop went on after it. */
    iteration: z.optional(z.int().check(z.positive())),
    loopContinued: z.optional(z.boolean()),
    /** A failed try of a node with `retry` that was tried again (never replayed). */
    retried: z.optional(z.boolean()),
    attempt: z.optional(z.int().check(z.positive())),
    /** The result is another run's, from the memo cache: the node did not run. */
    fromMemo: z.optional(z.boolean()),
  }),
);
export type NodeRecord = z.infer<typeof NodeRecordSchema>;

export const IrVersionSourceSchema = builtOnFirstUse(() => z.enum(['original', 'rules', 'llm', 'manual']));
export type IrVersionSource = z.infer<typeof IrVersionSourceSchema>;

/** One version of a run's workflow: the original, then each repair. */
export const IrVersionItemSchema = builtOnFirstUse(() =>
  z.object({
    runId: RunIdSchema,
    version: z.int().check(z.nonnegative()),
    ir: WorkflowSchema,
    source: IrVersionSourceSchema,
    reason: z.optional(z.string()),
    /** Human-readable summary of what changed, one line per change. */
    diff: z.optional(z.array(z.string())),
    nodesChanged: z.optional(z.array(z.string())),
    createdAt: z.number(),
    usage: z.optional(LlmUsageSchema),
  }),
);
export type IrVersionItem = z.infer<typeof IrVersionItemSchema>;

/** Fields every event has. `key` sorts events within a run. */
const eventBase = { runId: RunIdSchema, key: z.string(), at: z.number() };
const nodeIdField = z.optional(z.string());

/** Progress, in order: a discriminated union on `type`, each with the fields its writer sets. */
export const RunEventSchema = builtOnFirstUse(() =>
  z.discriminatedUnion('type', [
    z.object({ ...eventBase, type: z.literal('run_started'), message: z.string() }),
    z.object({ ...eventBase, type: z.literal('run_resumed'), message: z.string() }),
    /** Nodes the walk replayed from their records, in path order. */
    z.object({
      ...eventBase,
      type: z.literal('node_cached'),
      data: z.object({ nodes: z.array(z.object({ id: z.string(), seq: z.int(), type: z.optional(z.string()) })) }),
    }),
    z.object({ ...eventBase, type: z.literal('node_interrupted'), nodeId: z.string(), seq: z.int(), message: z.string() }),
    /** A try of a node with `retry` failed; the next starts after `waitS` seconds. */
    z.object({
      ...eventBase,
      type: z.literal('node_retrying'),
      nodeId: z.string(),
      message: z.string(),
      data: z.object({ attempt: z.int(), max: z.int(), waitS: z.number() }),
    }),
    // category and code: how the failure that sent the run to repair was filed (the run viewer shows it per node).
    z.object({
      ...eventBase,
      type: z.literal('repair_started'),
      nodeId: nodeIdField,
      message: z.string(),
      data: z.object({
        attempt: z.int(),
        max: z.int(),
        category: z.optional(ErrorCategorySchema),
        code: z.optional(z.string()),
      }),
    }),
    z.object({
      ...eventBase,
      type: z.literal('repair_applied'),
      message: z.string(),
      data: z.object({
        attempt: z.int(),
        version: z.int(),
        source: IrVersionSourceSchema,
        nodesChanged: z.array(z.string()),
      }),
    }),
    z.object({
      ...eventBase,
      type: z.literal('repair_failed'),
      nodeId: nodeIdField,
      message: z.string(),
      data: z.object({ attempt: z.int(), outcome: z.optional(z.enum(['refused', 'failed', 'rejected'])) }),
    }),
    z.object({ ...eventBase, type: z.literal('run_succeeded') }),
    z.object({
      ...eventBase,
      type: z.literal('run_failed'),
      nodeId: nodeIdField,
      message: z.string(),
      data: z.optional(z.object({ category: ErrorCategorySchema, code: z.string() })),
    }),
    z.object({ ...eventBase, type: z.literal('execution_continued'), nodeId: nodeIdField, message: z.string() }),
    z.object({ ...eventBase, type: z.literal('run_cancelled'), nodeId: nodeIdField, message: z.string() }),
    /** A chunk of a batch's items was recorded: `done` of `total` items are settled, `failed` of them failed. */
    z.object({
      ...eventBase,
      type: z.literal('batch_progress'),
      nodeId: z.string(),
      data: z.object({
        done: z.int(),
        total: z.int(),
        failed: z.int(),
        replayed: z.int(),
      }),
    }),
    /** The run paused (DESIGN 7b): what it waits for, and until when (epoch ms). */
    z.object({
      ...eventBase,
      type: z.literal('run_waiting'),
      nodeId: nodeIdField,
      message: z.string(),
      data: z.object({ kind: WaitKindSchema, waitId: z.string(), until: z.optional(z.number()) }),
    }),
    /** A wait got its one answer (an event, a decision); an execution continues the run next (`run_woken`). */
    z.object({
      ...eventBase,
      type: z.literal('wait_answered'),
      nodeId: nodeIdField,
      message: z.string(),
      data: z.object({ kind: WaitKindSchema, waitId: z.string(), outcome: WaitOutcomeSchema }),
    }),
    /** An execution took the run over after its wait, with the wait's answer. */
    z.object({
      ...eventBase,
      type: z.literal('run_woken'),
      nodeId: nodeIdField,
      message: z.string(),
      data: z.object({ kind: WaitKindSchema, waitId: z.string(), outcome: WaitOutcomeSchema }),
    }),
    /** The execution stopped without recording an outcome (a Lambda timeout, an AWS limit); resume goes on. */
    z.object({ ...eventBase, type: z.literal('run_interrupted'), message: z.string() }),
  ]),
);
export type RunEvent = z.infer<typeof RunEventSchema>;
export type RunEventType = RunEvent['type'];
/** What the writer of an event of type `T` gives; the unit of work adds runId, key and time. */
export type RunEventFields<T extends RunEventType> = Omit<Extract<RunEvent, { type: T }>, 'runId' | 'key' | 'at' | 'type'>;
