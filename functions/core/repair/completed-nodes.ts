import type { NodeRecord, RunItem } from '../run-model.ts';
import type { CompletedNode } from './types.ts';

/** The latest visit of each node on the run's current path that has a recorded result (completed, or a warning). */
export function completedNodes(run: Pick<RunItem, 'latest'>, steps: readonly NodeRecord[]): CompletedNode[] {
  const bySeq = new Map(steps.map((s) => [s.seq, s]));
  const out: CompletedNode[] = [];
  for (const [nodeId, seq] of Object.entries(run.latest)) {
    const step = bySeq.get(seq);
    if (step === undefined || (step.status !== 'completed' && step.status !== 'warning')) continue;
    out.push({
      nodeId,
      nodeType: step.nodeType,
      sideEffects: step.sideEffects,
      outputs: step.outputs ?? {},
      ...(step.action === undefined ? {} : { action: step.action }),
    });
  }
  return out.sort((a, b) => (run.latest[a.nodeId] ?? 0) - (run.latest[b.nodeId] ?? 0));
}
