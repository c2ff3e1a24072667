import type { ClassificationRules } from './ir.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import * as z from './zod.ts';

/** A node failure described as data: what went wrong, for the user, the classifier and the repairer. */
export const NodeErrorSchema = builtOnFirstUse(() =>
  z.object({
    /** Stable code, e.g. EXIT_NONZERO, TIMEOUT, HTTP_STATUS, EXTRACT_MISSING, TEMPLATE_UNRESOLVED, PARAMS_INVALID. */
    code: z.string().check(z.minLength(1)),
    message: z.string(),
    details: z.optional(z.record(z.string(), z.unknown())),
  }),
);
export type NodeError = z.infer<typeof NodeErrorSchema>;

export const LlmUsageSchema = builtOnFirstUse(() =>
  z.object({
    model: z.string(),
    input_tokens: z.int().check(z.nonnegative()),
    output_tokens: z.int().check(z.nonnegative()),
    /** Prompt-cache writes and reads (pflow's prompt_cache), billed at 1.25-2x and 0.1x input. */
    cache_creation_input_tokens: z.optional(z.int().check(z.nonnegative())),
    cache_read_input_tokens: z.optional(z.int().check(z.nonnegative())),
    cost_usd: z.number().check(z.nonnegative()),
  }),
);
export type LlmUsage = z.infer<typeof LlmUsageSchema>;

/**
 * What a runner returns. Expected failures (non-zero exit, a 4xx, a missing extract path) are data
 * (`failed`); transient ones are thrown as `TransientError` so the state machine retries them.
 */
export const RunnerResultSchema = builtOnFirstUse(() =>
  z.discriminatedUnion('kind', [
    z.object({
      kind: z.literal('ok'),
      outputs: z.record(z.string(), z.unknown()),
      action: z._default(z.string().check(z.minLength(1)), 'default'),
      durationMs: z.number().check(z.nonnegative()),
      usage: z.optional(LlmUsageSchema),
      /** What the node did that a user should know though it succeeded (an output cut at its limit): the run's warnings. */
      warnings: z.optional(z.array(NodeErrorSchema)),
    }),
    z.object({
      kind: z.literal('failed'),
      error: NodeErrorSchema,
      /** Whatever the node produced before failing (stdout, a response body), for the repairer. */
      outputs: z.optional(z.record(z.string(), z.unknown())),
      durationMs: z.number().check(z.nonnegative()),
      usage: z.optional(LlmUsageSchema),
    }),
  ]),
);
export type RunnerResult = z.infer<typeof RunnerResultSchema>;

/** Where a node runs: identity of the visit, for idempotency keys and logs. */
export interface RunContext {
  readonly runId: string;
  readonly nodeId: string;
  readonly seq: number;
  readonly cacheKey: string;
  /** A batch item's index: the items of one node run side by side, each a call of its own. */
  readonly item?: number;
  readonly signal?: AbortSignal;
  /** The workflow's classification rules, for a node type that declares `capabilities.classificationRules`. */
  readonly classification?: ClassificationRules;
  /** The visit's span as a W3C `traceparent`, when the run is traced: outgoing requests carry it. */
  readonly traceparent?: string;
}

/**
 * What the engine does differently for a node type, declared by the type itself so that adding a type
 * touches its own file, the catalog and the stack's runner table, and nothing in core.
 */
export interface NodeCapabilities {
  /** Its successful outputs carry an API `response` that is inspected for business errors (classify.ts). */
  readonly apiResponse?: boolean;
  /** Its runner reads the workflow's classification rules (`RunContext.classification`). */
  readonly classificationRules?: boolean;
}

/**
 * What the engine knows of a node type without running it: params, outputs, side effects.
 * `paramsSchema` is a zod object so that validation can list the known param names.
 */
export interface NodeTypeSpec {
  readonly type: string;
  readonly paramsSchema: z.ZodMiniObject;
  /** Output keys a successful run always writes (templates may name these). */
  readonly outputKeys: readonly string[];
  /** Output keys that depend on the params (a workflow node's mapping); undefined when not known before it runs. */
  outputKeysFor?(params: Record<string, unknown>): readonly string[] | undefined;
  /** Whether running with these (possibly unresolved) params changes the world. */
  sideEffects(params: Record<string, unknown>): boolean;
  /**
   * Params whose text gets template values quoted for a context (the shell command), given the node's
   * params (a node may opt out, e.g. `raw: true`). Absent: values are substituted as text.
   */
  templateQuoting?(params: Record<string, unknown>): Readonly<Record<string, 'shell' | 'jsonata'>>;
  /** Longest a run of the node may take, in seconds, from its params. */
  timeoutS(params: Record<string, unknown>): number;
  readonly capabilities?: NodeCapabilities;
}

/**
 * A node type that can run. `run` gets its params already parsed by `paramsSchema` (the RunNode
 * handler parses them and reports bad ones as PARAMS_INVALID), so no runner parses them again.
 */
export interface NodeRunner<S extends z.ZodMiniObject = z.ZodMiniObject> extends NodeTypeSpec {
  readonly paramsSchema: S;
  run(params: z.output<S>, context: RunContext): Promise<RunnerResult>;
}

/** The node types a host knows, by type name. */
export type NodeCatalog = ReadonlyMap<string, NodeTypeSpec>;

export const makeCatalog = (specs: readonly NodeTypeSpec[]): NodeCatalog => new Map(specs.map((s) => [s.type, s]));
