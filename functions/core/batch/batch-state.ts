import { builtOnFirstUse } from '../lazy-schema.ts';
import type { NodeRecord } from '../run-model.ts';
import * as z from '../zod.ts';

/** Bound on the item errors a batch keeps in its state and record; `error_count` still counts them all. */
export const MAX_LISTED_ITEM_ERRORS = 100;

export const ItemErrorSchema = builtOnFirstUse(() => z.object({ index: z.int().check(z.nonnegative()), message: z.string() }));
export type ItemError = z.infer<typeof ItemErrorSchema>;

/** Where a batch attempt keeps its item records: item `i` is the record at seq `base + i`. */
export const ItemRangeSchema = builtOnFirstUse(() => z.object({ base: z.int().check(z.positive()), count: z.int().check(z.nonnegative()) }));
export type ItemRange = z.infer<typeof ItemRangeSchema>;

/**
 * The batch in flight, carried by the run item: small whatever the number of items (counts, a bounded
 * error list and the item range), so every engine step still reads and writes one small run item.
 */
export const BatchStateSchema = builtOnFirstUse(() =>
  z.object({
    /** The seq of the batch node's own record. */
    seq: z.int().check(z.positive()),
    nodeId: z.string(),
    nodeType: z.string(),
    visit: z.int().check(z.positive()),
    range: ItemRangeSchema,
    /** The next item not yet dispatched or replayed. */
    next: z.int().check(z.nonnegative()),
    /** The previous attempt of this batch (a crash, a failed item, a repair): its completed items are replayed. */
    previous: z.optional(ItemRangeSchema),
    successCount: z.int().check(z.nonnegative()),
    errorCount: z.int().check(z.nonnegative()),
    replayedCount: z.int().check(z.nonnegative()),
    errors: z.array(ItemErrorSchema),
    cacheKey: z.string(),
    /** Failed items with tries left (`max_retries`), dispatched again before new items, at the same record slot. */
    retry: z.optional(z.array(z.object({ index: z.int().check(z.nonnegative()), attempt: z.int().check(z.positive()) }))),
    sideEffects: z.boolean(),
    /** The child run of the item in flight, when the batch is over a workflow node (a cancel of the run cancels it). */
    child: z.optional(z.string()),
    startedAt: z.number(),
    repaired: z.optional(z.boolean()),
  }),
);
export type BatchState = z.infer<typeof BatchStateSchema>;

/** Marks a node record as one item of a batch (the batch's record seq and the item's index). */
export const ItemOfSchema = builtOnFirstUse(() =>
  z.object({
    batchSeq: z.int().check(z.positive()),
    index: z.int().check(z.nonnegative()),
    /** Which try of the item this is (pflow's `max_retries` tries in all); 1 when absent. */
    attempt: z.optional(z.int().check(z.positive())),
  }),
);
export type ItemOf = z.infer<typeof ItemOfSchema>;

/** Records read per store call when a batch reads its items (a window of the previous attempt, or all of them at the end). */
export const READ_WINDOW = 500;
/** Longest item error message kept in the batch's outputs. */
const ITEM_MESSAGE_CHARS = 500;

export const itemMessage = (record: NodeRecord | undefined): string =>
  (record?.error?.message ?? `item ended with status ${record?.status ?? 'unknown'}`).slice(0, ITEM_MESSAGE_CHARS);

/** Counts an item that ended (completed or failed) in the batch in flight; a failure is listed while the list has room. */
export const countItem = (batch: BatchState, index: number, record: NodeRecord | undefined): void => {
  if (record?.status === 'completed') {
    batch.successCount += 1;
    return;
  }
  batch.errorCount += 1;
  if (batch.errors.length < MAX_LISTED_ITEM_ERRORS) batch.errors.push({ index, message: itemMessage(record) });
};
