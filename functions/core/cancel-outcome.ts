import type { CancelledStep, CancelResult } from './cancel-run.ts';

/** What a cancel cut, as the canceller reports it (the CLI's line; the JSON and API answer carry it as is). */
export interface CancelOutcome {
  interrupted_node: string;
  /** A node's own end (CancelledStep), a batch cut part-way, or a workflow node whose child run was cancelled with it. */
  node_outcome: CancelledStep | 'batch_cut' | 'child_cancelled';
  /** A batch in flight: how many of its items had started. */
  batch?: { started: number; total: number };
  /** A workflow node in flight: its child run, and what became of the child's own node in flight (none: nothing ran). */
  child?: { run_id: string } & Partial<CancelOutcome>;
}

/**
 * What became of what the cancel found in flight. `awaitStep` answers for a node whose process may still
 * record its end (awaitCancelledStep, with the wait the caller can afford); a child run's node is awaited too.
 */
export const cancelOutcomeOf = async (
  result: CancelResult,
  awaitStep: (runId: string, seq: number) => Promise<CancelledStep>,
): Promise<CancelOutcome | undefined> => {
  const node = result.interruptedNode;
  if (node === undefined || result.interruptedSeq === undefined) return undefined;
  if (result.batch) return { interrupted_node: node, node_outcome: 'batch_cut', batch: result.batch };
  if (result.child) {
    const child = await cancelOutcomeOf(result.child, awaitStep);
    return { interrupted_node: node, node_outcome: 'child_cancelled', child: { run_id: result.child.run.runId, ...child } };
  }
  if (result.notStarted) return { interrupted_node: node, node_outcome: 'not_started' };
  return { interrupted_node: node, node_outcome: await awaitStep(result.run.runId, result.interruptedSeq) };
};
