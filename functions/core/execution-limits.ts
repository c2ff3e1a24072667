import type { Workflow } from './ir.ts';
import type { NodeCatalog } from './node-type.ts';
import { ENGINE_RETRY, LAMBDA_SERVICE_RETRY, type RetryPolicy, retryWaitS, THROTTLE_RETRY, TRANSIENT_RETRY } from './retry-policy.ts';
import type { ExecCounters } from './state-io.ts';

/** Limits of one execution; past them the run continues as a new execution of the same run. */
export interface ExecutionLimits {
  maxAdvances: number;
  maxMs: number;
}

/** Events a Standard execution's history may hold; past it AWS fails the execution. */
export const STANDARD_HISTORY_EVENTS = 25_000;

/** History events of a Task state that succeeds at once: entered, scheduled, started, succeeded, exited. */
const TASK_EVENTS = 5;
/** Each failed try a Retry repeats adds scheduled, started and failed. */
const RETRY_EVENTS = 3;
/** A Choice state: entered, exited. */
const CHOICE_EVENTS = 2;
/** Room kept for the states that end or continue an execution (Continue, its retries, Failed, Done). */
const HISTORY_RESERVE_EVENTS = 200;

const taskEvents = (policies: readonly RetryPolicy[]): number => TASK_EVENTS + RETRY_EVENTS * policies.reduce((tries, policy) => tries + policy.maxAttempts, 0);

/**
 * History events of one engine step in the worst case the Retry policies allow: Advance (engine and
 * service retries all used), Route, and a runner Task (runner and service retries all used; a Repair
 * Task retries less). About 48 events, so a step count alone under-counts a retried run about fourfold.
 */
export const WORST_EVENTS_PER_STEP =
  taskEvents([ENGINE_RETRY, THROTTLE_RETRY, LAMBDA_SERVICE_RETRY]) + CHOICE_EVENTS + taskEvents([TRANSIENT_RETRY, THROTTLE_RETRY, LAMBDA_SERVICE_RETRY]);

/**
 * Worst-case seconds a runner Task may hold an execution for a node of timeout `timeoutS`: every try
 * the runner Retry allows runs to the node's timeout (a timed-out HTTP or LLM call is a TransientError,
 * retried), plus the waits between tries of both Retry policies (service errors fail before the call,
 * so they add their waits only).
 * Throttling's waits (THROTTLE_RETRY) are left out: they come only when the account has no capacity,
 * and an Express execution they push past its 5 minutes ends as throttling exhausted does, the run
 * interrupted and resumable (the watcher); counting them would hand almost every default-sized node
 * to a new execution.
 */
export const runnerWorstCaseS = (timeoutS: number): number =>
  (1 + TRANSIENT_RETRY.maxAttempts) * timeoutS + retryWaitS(TRANSIENT_RETRY) + retryWaitS(LAMBDA_SERVICE_RETRY);

/** Worst-case seconds of a Repair Task of timeout `timeoutS`: one try, and the service retries' waits. */
export const repairWorstCaseS = (timeoutS: number): number => timeoutS + retryWaitS(LAMBDA_SERVICE_RETRY);

/**
 * When a run continues as a new execution on AWS: before a node that might not end within an Express
 * execution's 5 minutes (280 s leaves room for the last Advance), and before a Standard execution's
 * history could reach 25,000 events with every retry of every step used (WORST_EVENTS_PER_STEP).
 */
export const DEFAULT_EXECUTION_LIMITS: ExecutionLimits = {
  maxAdvances: Math.floor((STANDARD_HISTORY_EVENTS - HISTORY_RESERVE_EVENTS) / WORST_EVENTS_PER_STEP),
  maxMs: 280_000,
};

/**
 * Longest node timeout an Express run allows: a node must fit, every retry included, in a fresh
 * execution (the engine continues before a node that would not fit in the time left).
 */
export const EXPRESS_MAX_NODE_TIMEOUT_S = Math.floor(
  (DEFAULT_EXECUTION_LIMITS.maxMs / 1000 - retryWaitS(TRANSIENT_RETRY) - retryWaitS(LAMBDA_SERVICE_RETRY)) / (1 + TRANSIENT_RETRY.maxAttempts),
);

export type RunMode = 'express' | 'standard';

/** How long the repair's one LLM call may take (the Anthropic client's timeout in the Repair Lambda). */
export const REPAIR_LLM_TIMEOUT_S = 120;

/**
 * Longest a repair may take (the Repair Lambda's timeout): its one LLM call, and 30 s for the cold
 * start, the key's read and the store's reads and writes. With the service retries' waits it fits a
 * fresh Express execution, so a repair early in an execution stays in it; an execution with less time
 * left continues before it. (At 300 s no Express execution could hold a repair: each one continued
 * first, and a repair that used its 300 s outlived the execution's 5 minutes.)
 */
export const REPAIR_MAX_S = REPAIR_LLM_TIMEOUT_S + 30;

/**
 * Express unless a node may run longer than an Express execution can wait for it; a batch item's retry
 * waits `retry_wait` (a Wait state) before its runner, in the same execution, so the wait counts too.
 */
export const chooseMode = (workflow: Workflow, catalog: NodeCatalog): RunMode =>
  workflow.nodes.every(
    (node) =>
      (catalog.get(node.type)?.timeoutS(node.params) ?? Number.POSITIVE_INFINITY) + Math.ceil(node.batch?.retry_wait ?? 0) <= EXPRESS_MAX_NODE_TIMEOUT_S,
  )
    ? 'express'
    : 'standard';

/**
 * Whether to hand over to a new execution before dispatching a Task: too many steps for the
 * execution history (both kinds), or the Task may not finish within the execution's time (Express).
 * `worstCaseS` is the Task's time with its retries counted (`runnerWorstCaseS`, `repairWorstCaseS`).
 * An execution always dispatches at least one node, so a run cannot continue forever.
 */
export const mustContinueBefore = (limits: ExecutionLimits | undefined, exec: ExecCounters, mode: RunMode, now: number, worstCaseS: number): boolean => {
  if (!limits || exec.advances <= 1) return false;
  if (exec.advances >= limits.maxAdvances) return true;
  // Only Express executions have a time limit; a Standard one may run for a year.
  if (mode === 'standard') return false;
  return now - exec.startedAt + worstCaseS * 1000 > limits.maxMs;
};
