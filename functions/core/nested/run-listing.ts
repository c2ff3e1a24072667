import type { RunItem } from '../run-model.ts';

/**
 * Runs read per listing to find top-level runs and count their children: a child run is written after
 * its parent, so in a newest-first listing it sits near its parent; counts are of the children in this window.
 */
export const listingWindow = (limit: number): number => Math.min(Math.max(limit * 10, 200), 1000);

/** A run in a listing: its direct child runs counted (within the same listing), its parent named when it is a child. */
export type ListedRun = { run: RunItem; children: number; parentRunId?: string };

/**
 * Top-level runs by default (a workflow node's child runs are counted on their parent, not listed beside it);
 * with `includeChildren`, every run, each child naming its parent. Newest first, as the store listed them.
 */
export const listRunTree = (runs: readonly RunItem[], options: { includeChildren: boolean }): ListedRun[] => {
  const children = new Map<string, number>();
  for (const r of runs) if (r.parent) children.set(r.parent.runId, (children.get(r.parent.runId) ?? 0) + 1);
  return runs
    .filter((r) => options.includeChildren || r.parent === undefined)
    .map((run) => ({ run, children: children.get(run.runId) ?? 0, ...(run.parent ? { parentRunId: run.parent.runId } : {}) }));
};
