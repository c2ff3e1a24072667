import type { Advance } from '../advance.ts';
import { StaleRunError } from '../errors.ts';
import type { AdvanceOutcome, BatchItemSpec } from '../state-io.ts';
import { childRunId, startChildAt } from './child-run.ts';

/**
 * Most items a batch over a workflow node may have: each item's child is listed in the parent's run item
 * (for status, the report and a cancel), which must stay well under DynamoDB's 400 KB item.
 */
export const WORKFLOW_BATCH_MAX_ITEMS = 250;

/** Why a batch over a workflow node cannot have this many items, if it cannot. */
export const childLimitRefusal = (nodeId: string, count: number): string | undefined =>
  count > WORKFLOW_BATCH_MAX_ITEMS
    ? `node '${nodeId}' has ${count} batch items, over the ${WORKFLOW_BATCH_MAX_ITEMS} a batch over a nested workflow may have (each item is a child run the parent lists); split the items over several nodes`
    : undefined;

/**
 * One item of a batch over a workflow node: its child run, with an id of its own for that item of that
 * visit, so a later attempt of the batch (a resume, a retry) finds the child it started: a child that
 * succeeded is recorded without running again, one that failed or was still running is taken over and
 * walks from its start. The execution drives one child at a time, down and back up in the same call as
 * a single workflow node's child; its end is the item's record (`recordItemChild`).
 */
export const enterItemChild = (step: Advance, spec: BatchItemSpec): Promise<AdvanceOutcome> => {
  const batch = step.run.batch;
  if (!batch) throw new StaleRunError(`run ${step.run.runId} has no batch in flight`);
  const { item, seq } = spec;
  return startChildAt(step, spec.node.params, {
    nodeId: batch.nodeId,
    visit: batch.visit,
    seq,
    childId: childRunId(step.run, batch.nodeId, batch.visit, item.index),
    slot: { seq, item, cacheKey: spec.node.cacheKey },
  });
};
