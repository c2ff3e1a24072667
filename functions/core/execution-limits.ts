import type { Workflow } from './ir.ts';
import type { NodeCatalog } from './node-type.ts';
import type { ExecCounters } from './state-io.ts';

/** Limits of one execution; past them the run continues as a new execution of the same run. */
export interface ExecutionLimits {
  maxAdvances: number;
  maxMs: number;
}

/**
 * When a run continues as a new execution on AWS: before a node that might not end within an Express
 * execution's 5 minutes (280 s leaves room for the last Advance), and before a Standard execution's
 * history nears 25,000 events (about 13 per executed node: Advance 5, Route 2, RunNode 5, a retry more).
 */
export const DEFAULT_EXECUTION_LIMITS: ExecutionLimits = { maxAdvances: 1_000, maxMs: 280_000 };

/**
 * Longest node timeout an Express run allows. The engine starts a new execution before a node that would
 * not end within the current one, so a node must fit in a fresh 5-minute execution, with room for a retry.
 */
export const EXPRESS_MAX_NODE_TIMEOUT_S = 120;

export type RunMode = 'express' | 'standard';

/** Longest a repair may take (the Repair Lambda's timeout): an Express execution continues before one it cannot fit. */
export const REPAIR_MAX_S = 300;

/** Express unless a node may run longer than an Express execution can wait for it. */
export const chooseMode = (workflow: Workflow, catalog: NodeCatalog): RunMode =>
  workflow.nodes.every((node) => (catalog.get(node.type)?.timeoutS(node.params) ?? Number.POSITIVE_INFINITY) <= EXPRESS_MAX_NODE_TIMEOUT_S)
    ? 'express'
    : 'standard';

/**
 * Whether to hand over to a new execution before dispatching a node: too many steps for the
 * execution history (both kinds), or the node may not finish within the execution's time (Express).
 * An execution always dispatches at least one node, so a run cannot continue forever.
 */
export const mustContinueBefore = (
  limits: ExecutionLimits | undefined,
  exec: ExecCounters,
  mode: RunMode,
  now: number,
  timeoutS: number,
): boolean => {
  if (!limits || exec.advances <= 1) return false;
  if (exec.advances >= limits.maxAdvances) return true;
  // Only Express executions have a time limit; a Standard one may run for a year.
  if (mode === 'standard') return false;
  return now - exec.startedAt + timeoutS * 1000 > limits.maxMs;
};
