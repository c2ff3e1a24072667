import { ItemOfSchema } from './batch/batch-state.ts';
import { BlobUploadSchema, ParamsRefSchema } from './blob-store.ts';
import { ClassificationRulesSchema } from './ir.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { LlmUsageSchema, RunnerResultSchema } from './node-type.ts';
import { OwnerSchema, RunErrorSchema, RunIdSchema } from './run-model.ts';
import { WaitKindSchema } from './waits/wait-model.ts';
import * as z from './zod.ts';

/** The node a RunNode state runs: everything the runner needs, params already resolved. */
export const RunNodeSpecSchema = builtOnFirstUse(() =>
  z.object({
    id: z.string(),
    type: z.string(),
    params: z.record(z.string(), z.unknown()),
    cacheKey: z.string(),
    timeoutS: z.number().check(z.positive()),
    /** Where the runner puts outputs too large for the state payload (a presigned URL; `file:` locally). */
    upload: z.optional(BlobUploadSchema),
    /** The workflow's classification rules, for a node type that reads them (`capabilities.classificationRules`). */
    classification: z.optional(ClassificationRulesSchema),
    /** Params too large to send inline (MAX_INLINE_PARAMS_BYTES): `params` is empty and the runner reads them here. */
    paramsRef: z.optional(ParamsRefSchema),
    /** The visit's span, as a W3C traceparent, when the run is traced: an http node sends it on. */
    traceparent: z.optional(z.string().check(z.maxLength(55))),
  }),
);
export type RunNodeSpec = z.infer<typeof RunNodeSpecSchema>;

/** What a Catch puts at `$.error`: Step Functions' {Error, Cause}. */
export const TaskErrorSchema = builtOnFirstUse(() => z.object({ Error: z.string(), Cause: z.optional(z.string()) }));
export type TaskError = z.infer<typeof TaskErrorSchema>;

/** What the Repair state returns at `$.repair`. */
export const RepairReportSchema = builtOnFirstUse(() =>
  z.object({
    applied: z.boolean(),
    message: z.string(),
    /** A proposal was made and refused: what was wrong with it, for the next attempt. */
    problems: z.optional(z.array(z.string())),
    /** LLM tokens and cost spent on a repair that was not applied (an applied one carries its usage in its IR version). */
    usage: z.optional(LlmUsageSchema),
  }),
);
export type RepairReport = z.infer<typeof RepairReportSchema>;

/** Counters of the current execution, so the engine can continue as a new one before AWS limits. */
export const ExecCountersSchema = builtOnFirstUse(() => z.object({ startedAt: z.number(), advances: z.int().check(z.nonnegative()) }));
export type ExecCounters = z.infer<typeof ExecCountersSchema>;
/**
 * What every payload between states carries: the run, its owner (each step proves it still owns the run), the
 * counters and the run item's `rev` when the outcome was committed. A function: schemas are built on first use.
 */
const envelope = () => ({ runId: RunIdSchema, owner: z.string(), exec: z.optional(ExecCountersSchema), rev: z.optional(z.string()) });

/** Run a node: what a RunNode Task receives. */
export const RunOutcomeSchema = builtOnFirstUse(() =>
  z.object({
    kind: z.literal('run'),
    ...envelope(),
    seq: z.int().check(z.positive()),
    node: RunNodeSpecSchema,
    /** A retried node (its `retry`) waits this many whole seconds before its runner (a Wait state: no Lambda waits). */
    waitS: z.optional(z.int().check(z.positive())),
    /** A rate limit's start time for the node (ISO 8601): a Wait state holds the runner until then (flow/flow-step.ts). */
    waitUntil: z.optional(z.string()),
  }),
);
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;
/** Repair the run's workflow: what the Repair Task receives. */
export const RepairOutcomeSchema = builtOnFirstUse(() =>
  z.object({
    kind: z.literal('repair'),
    ...envelope(),
    failedNode: z.string(),
    attempt: z.int().check(z.positive()),
  }),
);
export const ContinueOutcomeSchema = builtOnFirstUse(() => z.object({ kind: z.literal('continue'), ...envelope() }));
export const DoneOutcomeSchema = builtOnFirstUse(() => z.object({ kind: z.literal('done'), ...envelope() }));
export const FailedOutcomeSchema = builtOnFirstUse(() => z.object({ kind: z.literal('failed'), ...envelope(), error: RunErrorSchema }));
/** The run is `waiting` (DESIGN 7b): the execution ends, and a wake-up or an answer starts the next one. */
export const WaitingOutcomeSchema = builtOnFirstUse(() =>
  z.object({ kind: z.literal('waiting'), ...envelope(), waitId: z.string(), waitKind: WaitKindSchema }),
);
/** A wake-up that found nothing to do (the run was cancelled, answered otherwise, or taken by another wake-up): the execution ends. */
export const IdleOutcomeSchema = builtOnFirstUse(() => z.object({ kind: z.literal('idle'), ...envelope(), reason: z.string() }));

/**
 * The input of an execution started to continue a waiting run (a due wake-up, an answered wait): its first
 * Advance claims the run for `owner` (waits/claim-wake.ts). `holder` is the owner as the launcher made it.
 */
export const WakeInputSchema = builtOnFirstUse(() => z.object({ kind: z.literal('wake'), ...envelope(), waitId: z.string(), holder: z.optional(OwnerSchema) }));
export type WakeInput = z.infer<typeof WakeInputSchema>;

/**
 * One item of a RunBatch Map. `waitS` (a retry of a failed item, pflow's `retry_wait`) makes the Map's
 * iterator wait that many whole seconds before the item's runner (a Wait state: no Lambda waits).
 */
export const BatchItemSpecSchema = builtOnFirstUse(() =>
  z.extend(RunOutcomeSchema.unwrap(), { item: ItemOfSchema, waitS: z.optional(z.int().check(z.positive())) }),
);
export type BatchItemSpec = z.infer<typeof BatchItemSpecSchema>;
/** What the RecordItem Task receives: the item, with the runner's `result` or a caught `error`. */
export const ItemResultInputSchema = builtOnFirstUse(() =>
  z.extend(BatchItemSpecSchema.unwrap(), { result: z.optional(RunnerResultSchema), error: z.optional(TaskErrorSchema) }),
);
export type ItemResultInput = z.infer<typeof ItemResultInputSchema>;
/** What RecordItem returns into the Map's result: small, whatever the item's outputs. */
export const ItemRecordedSchema = builtOnFirstUse(() => z.object({ index: z.int(), status: z.string() }));
export type ItemRecorded = z.infer<typeof ItemRecordedSchema>;
/** Run a chunk of a batch's items (the RunBatch Map state); `seq` is the batch node's record. */
export const BatchOutcomeSchema = builtOnFirstUse(() =>
  z.object({
    kind: z.literal('batch'),
    ...envelope(),
    seq: z.int().check(z.positive()),
    nodeType: z.string(),
    width: z.int().check(z.gte(1), z.lte(100)),
    items: z.array(BatchItemSpecSchema),
  }),
);

/**
 * What Advance returns; the Route Choice state branches on `kind` (and on `node.type` for runs).
 * Every kind carries `owner` so that each step can prove it still owns the run.
 */
export const AdvanceOutcomeSchema = builtOnFirstUse(() =>
  z.discriminatedUnion('kind', [
    RunOutcomeSchema.unwrap(),
    BatchOutcomeSchema.unwrap(),
    RepairOutcomeSchema.unwrap(),
    ContinueOutcomeSchema.unwrap(),
    DoneOutcomeSchema.unwrap(),
    FailedOutcomeSchema.unwrap(),
    WaitingOutcomeSchema.unwrap(),
    IdleOutcomeSchema.unwrap(),
  ]),
);
export type AdvanceOutcome = z.infer<typeof AdvanceOutcomeSchema>;
export type AdvanceKind = AdvanceOutcome['kind'];

/**
 * What Advance receives: the execution input (`start`), or the previous outcome with the
 * runner's `result`, a caught `error`, or the Repair state's `repair` added by its ResultPath.
 */
export const AdvanceInputSchema = builtOnFirstUse(() =>
  z.union([
    // The run outcome back from its RunNode Task, with the runner's result or the caught error.
    z.extend(RunOutcomeSchema.unwrap(), { result: z.optional(RunnerResultSchema), error: z.optional(TaskErrorSchema) }),
    // The repair outcome back from the Repair Task, with its report or the caught error.
    z.extend(RepairOutcomeSchema.unwrap(), { repair: z.optional(RepairReportSchema), error: z.optional(TaskErrorSchema) }),
    // The items come back with only what the engine reads (it reads their results from the store, where RecordItem put them).
    z.object({
      kind: z.literal('batch'),
      ...envelope(),
      seq: z.int().check(z.positive()),
      // `child`: an item of a batch over a workflow node, ended by its child run in this call (no RecordItem state wrote it).
      items: z.array(z.object({ seq: z.int().check(z.positive()), item: ItemOfSchema, child: z.optional(ItemResultInputSchema) })),
      error: z.optional(TaskErrorSchema),
    }),
    WakeInputSchema.unwrap(),
    z.object({ kind: z._default(z.literal('start'), 'start'), ...envelope() }),
  ]),
);
export type AdvanceInput = z.infer<typeof AdvanceInputSchema>;
