import type { Advance } from '../advance.ts';
import { computeCacheKey } from '../cache-key.ts';
import { nextNodeId } from '../ir.ts';
import { CHILD_RUN_FAILED } from '../nested/workflow-params.ts';
import type { NodeRecord, RunError } from '../run-model.ts';
import { setLatest } from '../run-path.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import { configOf } from './batch-config.ts';
import { type BatchState, itemMessage, MAX_LISTED_ITEM_ERRORS, READ_WINDOW } from './batch-state.ts';

/**
 * The batch's own record: pflow's outputs (`results` in input order, a failed item's with its `error`,
 * null for an item a fail-fast batch did not run; counts; every failed item's index and message), read
 * from the item records. A fail-fast batch
 * with a failed item fails like a node (error edge, repair or fail); a `continue` batch with failed items
 * takes its `error` edge when it has one, else goes on by `default`.
 */
export const finishBatch = async (step: Advance, batch: BatchState, count: number): Promise<AdvanceOutcome> => {
  const { run, deps, ir } = step;
  const node = step.node(batch.nodeId);
  const failFast = configOf(node).error_handling === 'fail_fast';
  const results: unknown[] = new Array(count).fill(null);
  const keys: string[] = new Array(count).fill('');
  const errors: { index: number; message: string }[] = [];
  const codes = new Map<number, string | undefined>();
  for (let start = 0; start < count; start += READ_WINDOW) {
    const seqs = [];
    for (let i = start; i < Math.min(start + READ_WINDOW, count); i += 1) seqs.push(batch.range.base + i);
    for (const r of await deps.store.getRecords(run.runId, seqs)) {
      const index = r.seq - batch.range.base;
      keys[index] = r.cacheKey;
      if (r.status === 'completed') {
        results[index] = r.outputs ?? {};
        continue;
      }
      // pflow's shape: a failed item's result is its outputs with the error beside them.
      const message = itemMessage(r);
      results[index] = { ...(r.outputs ?? {}), error: message };
      errors.push({ index, message });
      codes.set(index, r.error?.code);
    }
  }
  errors.sort((a, b) => a.index - b.index);
  const failed = failFast && errors.length > 0;
  const now = deps.now();
  const action = failed || (errors.length > 0 && nextNodeId(ir, node.id, 'error') !== undefined) ? 'error' : 'default';
  const first = errors[0];
  const outputs = { results, count, success_count: count - errors.length, error_count: errors.length, errors };
  const record: NodeRecord = {
    runId: run.runId,
    seq: batch.seq,
    nodeId: node.id,
    nodeType: node.type,
    visit: batch.visit,
    status: failed ? 'failed' : 'completed',
    cacheKey: computeCacheKey(node.type, { batchItems: keys }),
    sideEffects: batch.sideEffects,
    irVersion: run.irVersion,
    action,
    outputs,
    startedAt: batch.startedAt,
    finishedAt: now,
    durationMs: now - batch.startedAt,
    batch: batch.range,
    ...(failed && first ? { error: { code: 'BATCH_ITEM_FAILED', message: `item ${first.index + 1} of ${count} failed: ${first.message}` } } : {}),
    ...(batch.repaired ? { repaired: true } : {}),
  };
  // Over the running record of the same seq; the store keeps large outputs as a blob (BlobOffloadRunStore).
  await deps.store.putRecords([record]);
  step.writes.noteVisit(record);
  deps.cache.rememberOutputs(record);
  delete run.batch;
  setLatest(run, node.id, batch.seq);
  run.metrics.nodesExecuted += 1;
  if (failed && first) {
    const error: RunError = {
      node_id: node.id,
      category: 'execution_failure',
      code: 'BATCH_ITEM_FAILED',
      message: `batch node '${node.id}': item ${first.index + 1} of ${count} failed: ${first.message}`,
      // An item's child run had its own repairs: repairing the parent for it would be futile (as for a single workflow node).
      fixable: codes.get(first.index) !== CHILD_RUN_FAILED,
      details: { index: first.index, errors: errors.slice(0, MAX_LISTED_ITEM_ERRORS) },
    };
    return step.afterError(node.id, error);
  }
  return step.route(node.id, action);
};
