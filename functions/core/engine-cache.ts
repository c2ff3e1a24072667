import type { Workflow } from './ir.ts';
import type { RunItem, NodeRecord } from './run-model.ts';

// What one process keeps between engine steps. Everything here is either immutable once written
// (step records, IR versions) or trusted only with proof that it is current (the run item's rev).

const evictOldest = <K, V>(map: Map<K, V>, limit: number): void => {
  if (map.size >= limit) map.delete(map.keys().next().value as K);
};

/**
 * Step records never change once written, so a process keeps the outputs of recent ones: the next
 * node usually reads the previous node's outputs, and then needs no store read.
 */
const recentOutputs = new Map<string, { nodeId: string; outputs: Record<string, unknown> }>();
const RECENT_OUTPUTS_LIMIT = 256;
export const rememberOutputs = (record: NodeRecord): void => {
  if (record.status === 'failed') return;
  evictOldest(recentOutputs, RECENT_OUTPUTS_LIMIT);
  recentOutputs.set(`${record.runId}#${record.seq}`, { nodeId: record.nodeId, outputs: record.outputs ?? {} });
};

/**
 * The run item as this process last wrote it. A payload whose `rev` matches proves it is current
 * (any later write changes `rev`), so the next step can skip reading it; a takeover by another owner
 * still fails the conditional write. The object is handed over, not copied (a long run's item is
 * large): recalling it takes it out, and the step that changes it remembers it again once written.
 */
const recentRuns = new Map<string, RunItem>();
const RECENT_RUNS_LIMIT = 64;
export const rememberRun = (run: RunItem): void => {
  recentRuns.delete(run.runId);
  evictOldest(recentRuns, RECENT_RUNS_LIMIT);
  recentRuns.set(run.runId, run);
};
export const recallRun = (runId: string, rev: string | undefined): RunItem | undefined => {
  const run = recentRuns.get(runId);
  recentRuns.delete(runId);
  return rev !== undefined && run?.rev === rev ? run : undefined;
};

export const recallOutputs = (runId: string, seq: number): { nodeId: string; outputs: Record<string, unknown> } | undefined =>
  recentOutputs.get(`${runId}#${seq}`);

/** IR versions never change once written, so a process keeps them by run and version. */
const irVersions = new Map<string, Workflow>();
const IR_VERSIONS_LIMIT = 200;

export const recallIr = (runId: string, version: number): Workflow | undefined => irVersions.get(`${runId}#${version}`);

export const rememberIr = (runId: string, version: number, ir: Workflow): void => {
  evictOldest(irVersions, IR_VERSIONS_LIMIT);
  irVersions.set(`${runId}#${version}`, ir);
};
