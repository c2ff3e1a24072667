import { expandOutputs } from '../blob-store.ts';
import { classifyOutcome } from '../classify.ts';
import type { EngineDeps } from '../engine-deps.ts';
import { InvalidInputError } from '../errors.ts';
import type { NodeRecord } from '../run-model.ts';
import { type ItemRecorded, type ItemResultInput, ItemResultInputSchema } from '../state-io.ts';
import { writeItemRecord } from './item-writes.ts';

/** Whether an event for the engine Lambda is an item's result (RecordItem) rather than an Advance input. */
export const isItemResult = (event: unknown): boolean =>
  event !== null && typeof event === 'object' && 'item' in event && (event as { kind?: unknown }).kind === 'run';

/**
 * The RecordItem state: classifies one batch item's outcome as a single node's is classified, and writes
 * it as the item's own record before the item counts as done. It does not touch the run item, so items
 * finishing at once never contend; a retried call writes the same record again. The record's seq
 * was reserved for this item by the batch attempt (a stale execution can only write its own attempt's range).
 */
export const recordBatchItem = async (event: unknown, deps: EngineDeps): Promise<ItemRecorded> => {
  const parsed = ItemResultInputSchema.safeParse(event);
  if (!parsed.success) throw new InvalidInputError(`RecordItem got an input it cannot read: ${parsed.error.message}`);
  const record = await itemRecordOf(parsed.data, deps);
  await writeItemRecord(deps.store, record);
  return { index: parsed.data.item.index, status: record.status };
};

/** An item's record from its runner's result or caught error, classified as a single node's outcome is. */
export const itemRecordOf = async (input: ItemResultInput, deps: EngineDeps): Promise<NodeRecord> => {
  const { node } = input;
  const result =
    input.result?.outputs && deps.blobs
      ? { ...input.result, outputs: (await expandOutputs(deps.blobs, input.runId, input.seq, input.result.outputs)) ?? {} }
      : input.result;
  const spec = deps.catalog.get(node.type);
  const outcome = classifyOutcome({
    nodeId: node.id,
    nodeType: node.type,
    capabilities: spec?.capabilities ?? {},
    ...(result ? { result } : {}),
    ...(input.error ? { taskError: input.error } : {}),
    ...(node.classification ? { rules: node.classification } : {}),
  });
  const now = deps.now();
  const durationMs = result?.durationMs ?? 0;
  return {
    runId: input.runId,
    seq: input.seq,
    nodeId: node.id,
    nodeType: node.type,
    visit: 1,
    status: outcome.kind === 'success' ? 'completed' : outcome.kind === 'warning' ? 'warning' : 'failed',
    cacheKey: node.cacheKey,
    sideEffects: spec?.sideEffects(node.params) ?? true,
    irVersion: 0,
    action: outcome.kind === 'success' ? outcome.action : 'error',
    startedAt: now - durationMs,
    finishedAt: now,
    durationMs,
    item: input.item,
    ...(result?.outputs ? { outputs: result.outputs } : {}),
    ...(outcome.kind !== 'success' ? { error: { code: outcome.error.code, message: outcome.error.message } } : {}),
    ...(result?.usage ? { usage: result.usage } : {}),
  };
};
