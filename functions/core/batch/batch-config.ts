import { StaleRunError } from '../errors.ts';
import type { WorkflowNode } from '../ir.ts';
import { builtOnFirstUse } from '../lazy-schema.ts';
import * as z from '../zod.ts';

/** Outputs of a node run with `batch` (pflow's shape), whatever the node's own outputs are. */
export const BATCH_OUTPUT_KEYS = ['results', 'count', 'success_count', 'error_count', 'errors'] as const;

/** The name an item's index goes by in its params' templates. */
export const INDEX_NAME = '__index__';

/**
 * pflow's `batch` on a node (its BATCH_CONFIG_SCHEMA): the node runs once per item of `items`, each
 * run with `${item}` (or the `as` name) and `${__index__}` in its templates.
 */
export const BatchConfigSchema = builtOnFirstUse(() =>
  z.strictObject({
    items: z.union(
      [
        z.string().check(z.regex(/^\$\{.+\}$/, 'batch.items as text is one template, e.g. "${list.result}"')),
        z.array(z.unknown()).check(z.minLength(1, 'batch.items as a literal array needs at least one item')),
      ],
      { error: 'batch.items is a template such as "${fetch.response.items}" or a non-empty array' },
    ),
    as: z._default(
      z.string().check(
        z.regex(/^[a-zA-Z_]\w*$/, 'batch.as is an identifier (letters, digits, _), e.g. "file"'),
        z.refine((name) => name !== INDEX_NAME, { error: `batch.as cannot be '${INDEX_NAME}' (the item's index has that name)` }),
      ),
      'item',
    ),
    parallel: z._default(z.boolean(), false),
    max_concurrent: z._default(z.int().check(z.gte(1, 'batch.max_concurrent is 1-100'), z.lte(100, 'batch.max_concurrent is 1-100')), 10),
    error_handling: z._default(z.enum(['fail_fast', 'continue'], { error: 'batch.error_handling is "fail_fast" or "continue"' }), 'fail_fast'),
    /** Attempts per item, pflow's way (1 = no retry); transient errors also get the state machine's Retry. */
    max_retries: z._default(z.int().check(z.gte(1, 'batch.max_retries is 1-10'), z.lte(10, 'batch.max_retries is 1-10')), 1),
    retry_wait: z._default(z.number().check(z.gte(0, 'batch.retry_wait is 0 or more seconds')), 0),
  }),
);
export type BatchConfig = z.infer<typeof BatchConfigSchema>;

/**
 * Most items one chunk runs at once: an inline Map state runs at most 40 iterations at a time on AWS,
 * whatever its MaxConcurrency says, and a chunk as wide as `max_concurrent` (pflow allows 100) would only
 * queue the rest behind those 40 there and run them all at once locally. Both hosts cap at 40.
 */
export const MAX_BATCH_WIDTH = 40;

/** How many items run at once: one when sequential, else `max_concurrent` up to MAX_BATCH_WIDTH. */
export const batchWidth = (config: BatchConfig): number => (config.parallel ? Math.min(config.max_concurrent, MAX_BATCH_WIDTH) : 1);

/** The batch config of a node a run is batching; a node whose new version has no batch makes the run stale. */
export const configOf = (node: WorkflowNode): BatchConfig => {
  if (!node.batch) throw new StaleRunError(`node '${node.id}' is no longer a batch node in this workflow version`);
  return node.batch;
};
