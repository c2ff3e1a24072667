import { builtOnFirstUse } from './lazy-schema.ts';
import * as z from './zod.ts';

/** The loop's own cap when `max_iterations` is not given (pflow's built-in cap). */
export const DEFAULT_MAX_ITERATIONS = 100;
/** The name the loop's 1-based iteration goes by in the node's templates. */
export const ITERATION_NAME = '__iteration__';
/** Longest wait between two tries of a retried node (pflow caps exponential backoff there). */
export const RETRY_WAIT_CAP_S = 60;

/**
 * pflow's `loop` on a node: a do-while of that one node. `while`/`until` is one `${node.field}` reference
 * to the node's own latest output; `carry` maps a body input to a value of the previous iteration.
 */
export const LoopConfigSchema = builtOnFirstUse(() =>
  z
    .strictObject({
      while: z.optional(z.string().check(z.regex(/^\$\{[^{}]+\}$/, 'loop.while is one template naming a field of this node, e.g. "${poll.pending}"'))),
      until: z.optional(z.string().check(z.regex(/^\$\{[^{}]+\}$/, 'loop.until is one template naming a field of this node, e.g. "${poll.done}"'))),
      carry: z.optional(z.record(z.string(), z.unknown())),
      max_iterations: z.optional(
        z.union(
          [
            z.int().check(z.gte(1, 'loop.max_iterations is 1 or more')),
            z.string().check(z.regex(/^\$\{.+\}$/, 'loop.max_iterations is a number or one template')),
          ],
          {
            error: 'loop.max_iterations is a whole number of 1 or more, or a template such as "${rounds}"',
          },
        ),
      ),
    })
    .check(
      z.refine((loop) => (loop.while === undefined) !== (loop.until === undefined), {
        message: 'a loop declares exactly one of "while" (go on while it is true) and "until" (stop once it is true)',
      }),
    ),
);
export type LoopConfig = z.infer<typeof LoopConfigSchema>;

/**
 * pflow's `retry` on a node: `max` tries in all (1 = no retry), `wait` seconds before the first retry,
 * `exponential` doubling it each time (capped at RETRY_WAIT_CAP_S).
 */
export const RetryConfigSchema = builtOnFirstUse(() =>
  z.strictObject({
    max: z.int().check(z.gte(1, 'retry.max is 1-10 tries in all'), z.lte(10, 'retry.max is 1-10 tries in all')),
    wait: z._default(z.number().check(z.gte(0, 'retry.wait is 0 or more seconds'), z.lte(3600, 'retry.wait is at most 3600 seconds')), 1),
    backoff: z._default(z.enum(['fixed', 'exponential'], { error: 'retry.backoff is "fixed" or "exponential"' }), 'fixed'),
  }),
);
export type RetryConfig = z.infer<typeof RetryConfigSchema>;

/** Seconds before try `attempt + 1` of a node whose try `attempt` (1-based) failed. */
export const nodeRetryWaitS = (retry: RetryConfig, attempt: number): number =>
  Math.min(RETRY_WAIT_CAP_S, retry.backoff === 'exponential' ? retry.wait * 2 ** (attempt - 1) : retry.wait);

/** pflow's prompt-cache chunks (`## Cache`): each a prose prefix and one `${var}`, in declaration order. */
export const PromptCacheSchema = builtOnFirstUse(() =>
  z.strictObject({
    ttl: z.optional(z.string().check(z.regex(/^(([1-9]|[1-5][0-9]|60)m|1h)$/, 'cache.ttl is 1m-60m or 1h'))),
    items: z
      .array(z.strictObject({ name: z.string(), var: z.string(), prose_before: z._default(z.string(), '') }))
      .check(z.minLength(1, 'cache.items needs at least one chunk')),
  }),
);
export type PromptCache = z.infer<typeof PromptCacheSchema>;
