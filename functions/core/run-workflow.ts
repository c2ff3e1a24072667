import type { Workflow } from './ir.ts';
import type { RunStore } from './run-store.ts';

/** What `flowmend show <run-id> --workflow` and `GET /runs/{id}/workflow` answer. */
export interface RunWorkflow {
  run_id: string;
  /** The run's current version: 0 as started, one more per repair or patch. */
  version: number;
  source: string;
  reason?: string;
  workflow: Workflow;
}

/** A run's current workflow, the repaired version included (undefined for an unknown run): what a person edits for `resume --workflow`. */
export const loadRunWorkflow = async (store: RunStore, runId: string): Promise<RunWorkflow | undefined> => {
  const run = await store.getRun(runId);
  if (!run) return undefined;
  const item = await store.getIrVersion(runId, run.irVersion);
  if (!item) return undefined;
  return { run_id: runId, version: item.version, source: item.source, ...(item.reason === undefined ? {} : { reason: item.reason }), workflow: item.ir };
};
