import * as z from 'zod';

/** Bound on the item errors a batch keeps in its state and record; `error_count` still counts them all. */
export const MAX_LISTED_ITEM_ERRORS = 100;

export const ItemErrorSchema = z.object({ index: z.number().int().nonnegative(), message: z.string() });
export type ItemError = z.infer<typeof ItemErrorSchema>;

/** Where a batch attempt keeps its item records: item `i` is the record at seq `base + i`. */
export const ItemRangeSchema = z.object({ base: z.number().int().positive(), count: z.number().int().nonnegative() });
export type ItemRange = z.infer<typeof ItemRangeSchema>;

/**
 * The batch in flight, carried by the run item: small whatever the number of items (counts, a bounded
 * error list and the item range), so every engine step still reads and writes one small run item.
 */
export const BatchStateSchema = z.object({
  /** The seq of the batch node's own record. */
  seq: z.number().int().positive(),
  nodeId: z.string(),
  nodeType: z.string(),
  visit: z.number().int().positive(),
  range: ItemRangeSchema,
  /** The next item not yet dispatched or replayed. */
  next: z.number().int().nonnegative(),
  /** The previous attempt of this batch (a crash, a failed item, a repair): its completed items are replayed. */
  previous: ItemRangeSchema.optional(),
  successCount: z.number().int().nonnegative(),
  errorCount: z.number().int().nonnegative(),
  replayedCount: z.number().int().nonnegative(),
  errors: z.array(ItemErrorSchema),
  cacheKey: z.string(),
  /** Failed items with tries left (`max_retries`), dispatched again before new items, at the same record slot. */
  retry: z.array(z.object({ index: z.number().int().nonnegative(), attempt: z.number().int().positive() })).optional(),
  sideEffects: z.boolean(),
  startedAt: z.number(),
  repaired: z.boolean().optional(),
});
export type BatchState = z.infer<typeof BatchStateSchema>;

/** Marks a node record as one item of a batch (the batch's record seq and the item's index). */
export const ItemOfSchema = z.object({
  batchSeq: z.number().int().positive(),
  index: z.number().int().nonnegative(),
  /** Which try of the item this is (pflow's `max_retries` tries in all); 1 when absent. */
  attempt: z.number().int().positive().optional(),
});
export type ItemOf = z.infer<typeof ItemOfSchema>;
