import type { ItemOf } from '../batch/batch-state.ts';
import type { ParentLink, RunError, RunItem } from '../run-model.ts';
import type { AdvanceInput, AdvanceOutcome } from '../state-io.ts';
import { CHILD_RUN_FAILED, WORKFLOW_TYPE } from './workflow-params.ts';

/** How a workflow node's visit ended: its child run ended, or it could not start one. */
export type ChildEnd =
  | {
      kind: 'child';
      childRunId: string;
      link: ParentLink;
      succeeded: boolean;
      outputs: Record<string, unknown>;
      error?: RunError | undefined;
      durationMs: number;
    }
  /** Repairable in the parent (the parent's params are wrong). */
  | { kind: 'failed'; code: string; message: string }
  /** Not repairable in the parent: the run fails unless an `error` edge routes it. */
  | { kind: 'fatal'; code: string; message: string };

export const childEnd = (child: RunItem, link: ParentLink, error?: RunError): ChildEnd => ({
  kind: 'child',
  childRunId: child.runId,
  link,
  succeeded: child.status === 'succeeded',
  outputs: child.outputs ?? {},
  error: error ?? child.lastError,
  durationMs: Math.max(0, child.updatedAt - child.createdAt),
});

/** The child's outputs under this node's keys: `output_mapping` (child output -> node key), else all of them. */
const mapOutputs = (
  outputs: Record<string, unknown>,
  mapping: Record<string, string> | undefined,
): { ok: true; outputs: Record<string, unknown> } | { ok: false; missing: string[] } => {
  if (mapping === undefined) return { ok: true, outputs };
  const missing = Object.keys(mapping).filter((name) => !Object.hasOwn(outputs, name));
  if (missing.length > 0) return { ok: false, missing };
  return { ok: true, outputs: Object.fromEntries(Object.entries(mapping).map(([from, to]) => [to, outputs[from]])) };
};

type ChildResult = Pick<Extract<AdvanceInput, { kind: 'run' }>, 'result' | 'error'>;

/** What a workflow node's visit (or one item of it) returns, as if a RunNode Task had: a runner result or a caught error. */
const childResult = (end: ChildEnd): ChildResult => {
  switch (end.kind) {
    case 'failed':
      return { result: { kind: 'failed', error: { code: end.code, message: end.message }, durationMs: 0 } };
    case 'fatal':
      return { error: { Error: end.code, Cause: end.message } };
    case 'child': {
      const details = { child_run_id: end.childRunId };
      if (end.succeeded) {
        const mapped = mapOutputs(end.outputs, end.link.outputMapping);
        if (mapped.ok) return { result: { kind: 'ok', outputs: mapped.outputs, action: 'default', durationMs: end.durationMs } };
        const message = `child run ${end.childRunId} has no output ${mapped.missing.map((m) => `'${m}'`).join(', ')} named in output_mapping; it output: ${Object.keys(end.outputs).join(', ') || 'nothing'}`;
        return { result: { kind: 'failed', error: { code: 'OUTPUT_MAPPING_MISSING', message, details }, durationMs: end.durationMs } };
      }
      const where = end.error?.node_id ? ` at node '${end.error.node_id}'` : '';
      const message = `child run ${end.childRunId} failed${where}: ${end.error?.message ?? 'no error recorded'}`;
      // pflow's error_action: a failed child takes that action (its edge routes on) instead of failing the parent.
      if (end.link.errorAction !== 'error') {
        return { result: { kind: 'ok', outputs: { error: message, ...details }, action: end.link.errorAction, durationMs: end.durationMs } };
      }
      // The child had its own repairs; repairing the parent for it would be futile, so it is not repairable here.
      return { error: { Error: CHILD_RUN_FAILED, Cause: message } };
    }
  }
};

/**
 * The input that records a workflow node's visit in the parent, as if its RunNode Task had returned:
 * the same `recordNode` path classifies it, stages its record and routes on.
 */
export const recordWorkflowNode = (parentRunId: string, owner: string, seq: number, nodeId: string, end: ChildEnd): AdvanceInput => ({
  kind: 'run',
  runId: parentRunId,
  owner,
  seq,
  node: { id: nodeId, type: WORKFLOW_TYPE, params: {}, cacheKey: '', timeoutS: 1 },
  ...childResult(end),
});

/** Where one item of a batch over a workflow node is recorded in the parent: its record's seq, the item, its cache key. */
export interface ItemSlot {
  seq: number;
  item: ItemOf;
  cacheKey: string;
}

/**
 * The input that records one item of a batch over a workflow node, as if the RunBatch Map had run a chunk
 * of that one item: `recordChunk` writes the item's record from `child` (classified as RecordItem would) and goes on.
 */
export const recordItemChild = (parentRunId: string, owner: string, nodeId: string, slot: ItemSlot, end: ChildEnd): AdvanceInput => {
  const node = { id: nodeId, type: WORKFLOW_TYPE, params: {}, cacheKey: slot.cacheKey, timeoutS: 1 };
  const child = { kind: 'run' as const, runId: parentRunId, owner, seq: slot.seq, item: slot.item, node, ...childResult(end) };
  return { kind: 'batch', runId: parentRunId, owner, seq: slot.item.batchSeq, items: [{ seq: slot.seq, item: slot.item, child }] };
};

/** After an Advance of a child run that ended it: the input that records its workflow node (or its batch item) in the parent. */
export const parentHop = (run: RunItem, owner: string, outcome: AdvanceOutcome): AdvanceInput | undefined => {
  const link = run.parent;
  if (!link || (outcome.kind !== 'done' && outcome.kind !== 'failed')) return undefined;
  const ended: RunItem = { ...run, status: outcome.kind === 'done' ? 'succeeded' : 'failed' };
  const end = childEnd(ended, link, outcome.kind === 'failed' ? outcome.error : undefined);
  if (link.item) return recordItemChild(link.runId, owner, link.nodeId, { seq: link.seq, item: link.item, cacheKey: link.cacheKey ?? '' }, end);
  return recordWorkflowNode(link.runId, owner, link.seq, link.nodeId, end);
};
