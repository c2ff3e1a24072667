import type { Advance } from '../advance.ts';
import { StaleRunError } from '../errors.ts';
import type { NodeRecord } from '../run-model.ts';
import type { AdvanceInput, AdvanceOutcome } from '../state-io.ts';
import { configOf } from './batch-config.ts';
import { countItem } from './batch-state.ts';
import { nextChunk } from './batch-step.ts';
import { finishBatch } from './finish-batch.ts';
import { itemRecordOf } from './record-item.ts';

/** After the RunBatch Map: reads the chunk's item records (RecordItem wrote them) and goes on to the next chunk or the end. */
export const recordChunk = async (step: Advance, input: Extract<AdvanceInput, { kind: 'batch' }>): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  const batch = run.batch;
  if (!batch || batch.seq !== input.seq) {
    throw new StaleRunError(`run ${run.runId} is not waiting for batch step ${input.seq} (in flight: ${batch?.seq ?? 'none'})`);
  }
  // Items of a batch over a workflow node ended by their child run in this call: their records first, as RecordItem would write them.
  const ended = input.items.flatMap((i) => (i.child ? [i.child] : []));
  if (ended.length > 0) {
    await deps.store.putRecords(await Promise.all(ended.map((child) => itemRecordOf(child, deps))));
    delete batch.child;
  }
  const records = new Map(
    (
      await deps.store.getRecords(
        run.runId,
        input.items.map((i) => i.seq),
      )
    ).map((r) => [r.seq, r]),
  );
  const missing: NodeRecord[] = [];
  const now = deps.now();
  const maxTries = configOf(step.node(batch.nodeId)).max_retries;
  for (const { seq, item } of input.items) {
    let record = records.get(seq);
    const attempt = item.attempt ?? 1;
    if (record?.status === 'failed' && attempt < maxTries) {
      // pflow's max_retries: the item runs again (its record is overwritten by the next try's).
      batch.retry = [...(batch.retry ?? []), { index: item.index, attempt: attempt + 1 }];
      continue;
    }
    if (!record) {
      // The Map failed before this item's record was written (its error is the Map's).
      const why = input.error ? `${input.error.Error}: ${input.error.Cause ?? ''}` : 'no result was recorded';
      record = {
        runId: run.runId,
        seq,
        nodeId: batch.nodeId,
        nodeType: batch.nodeType,
        visit: 1,
        status: 'failed',
        cacheKey: '',
        sideEffects: batch.sideEffects,
        irVersion: run.irVersion,
        action: 'error',
        error: { code: 'ITEM_NOT_RECORDED', message: why },
        startedAt: now,
        finishedAt: now,
        durationMs: 0,
        item,
      };
      missing.push(record);
    }
    countItem(batch, item.index, record);
    if (record.usage) {
      run.metrics.llmInputTokens += record.usage.input_tokens;
      run.metrics.llmOutputTokens += record.usage.output_tokens;
      run.metrics.llmCostUsd += record.usage.cost_usd;
    }
  }
  if (missing.length > 0) await deps.store.putRecords(missing);
  // Each item costs the execution's history about what a node does (ItemRoute, its Task, RecordItem).
  step.exec.advances += input.items.length;
  step.writes.event('batch_progress', {
    nodeId: batch.nodeId,
    data: { done: batch.successCount + batch.errorCount, total: batch.range.count, failed: batch.errorCount, replayed: batch.replayedCount },
  });
  const node = step.node(batch.nodeId);
  const failFast = configOf(node).error_handling === 'fail_fast';
  if ((failFast && batch.errorCount > 0) || (batch.next >= batch.range.count && (batch.retry ?? []).length === 0)) {
    // The last progress event goes out before the batch's final record, so progress reads in order.
    await step.writes.commit({ flushAll: false });
    return finishBatch(step, batch, batch.range.count);
  }
  return nextChunk(step);
};
