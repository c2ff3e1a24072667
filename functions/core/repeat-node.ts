import type { Outcome } from './classify.ts';
import type { WorkflowNode } from './ir.ts';
import { DEFAULT_MAX_ITERATIONS, nodeRetryWaitS } from './node-config.ts';
import type { RunError } from './run-model.ts';
import { resolveValue, type TemplateContext, TemplateResolutionError } from './templates.ts';

/**
 * Failures a try again cannot fix (pflow skips the retry for its deterministic validation errors): the
 * params or templates are wrong, or the file system says the same thing every time.
 */
const DETERMINISTIC = new Set([
  'PARAMS_INVALID',
  'TEMPLATE_UNRESOLVED',
  'PATH_OUTSIDE_WORKSPACE',
  'NOT_A_FILE',
  'FILE_EXISTS',
  'FILE_TOO_LARGE',
  'DELETE_NOT_CONFIRMED',
  'TRANSFORM_FAILED',
  'EXTRACT_MISSING',
]);

/**
 * Whether a node's `retry` tries it again after this outcome, and after how many seconds. Retried: an
 * execution failure (a non-zero exit, a missing file, a 5xx or a timeout once the state machine's own
 * retries are used up), as pflow's guide promises for "when an attempt fails". Not retried: warnings
 * (an API's refusal says the same next time), HTTP 4xx, and the deterministic failures above.
 */
export const retryAfter = (node: WorkflowNode, outcome: Outcome, attempt: number): number | undefined => {
  const retry = node.retry;
  if (!retry || attempt >= retry.max || outcome.kind === 'success' || outcome.kind === 'warning') return undefined;
  const { error } = outcome;
  if (DETERMINISTIC.has(error.code) || error.category === 'template' || error.category === 'validation') return undefined;
  if (error.code === 'HTTP_STATUS' && error.category !== 'transient') return undefined;
  if (outcome.kind === 'fatal' && error.category !== 'transient' && error.code !== 'TIMEOUT' && error.code !== 'States.Timeout') return undefined;
  return nodeRetryWaitS(retry, attempt);
};

/** Whole seconds a Wait state waits for a retry: rounded up, never down to no wait (as batch retry_wait). */
export const waitStateSeconds = (seconds: number): number | undefined => (seconds > 0 ? Math.ceil(seconds) : undefined);

export type LoopDecision = { kind: 'again' } | { kind: 'stop'; stopped: 'condition' | 'max_iterations' } | { kind: 'error'; error: RunError };

/** A condition's value as a boolean: booleans, numbers, null, lists and objects as Python reads them; text only as true/false/yes/no or a number. */
const truth = (value: unknown): boolean | undefined => {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value !== 0;
  if (value === null || value === undefined) return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  const text = String(value).trim().toLowerCase();
  if (['true', 'yes', '1'].includes(text)) return true;
  if (['false', 'no', ''].includes(text)) return false;
  // A number as text (a shell's stdout): true unless zero.
  return /^-?\d+(\.\d+)?$/.test(text) ? Number(text) !== 0 : undefined;
};

/**
 * After iteration `iteration` of a loop node succeeded: run it again, or stop (pflow's do-while). `context`
 * has the node's own outputs of this iteration; reaching `max_iterations` is a stop, not an error.
 */
export const decideLoop = (node: WorkflowNode, iteration: number, context: TemplateContext): LoopDecision => {
  const loop = node.loop;
  if (!loop) return { kind: 'stop', stopped: 'condition' };
  const fail = (code: string, message: string): LoopDecision => ({
    kind: 'error',
    error: { node_id: node.id, category: 'execution_failure', code, message, fixable: true },
  });
  let max: unknown;
  let condition: unknown;
  try {
    max = loop.max_iterations === undefined ? DEFAULT_MAX_ITERATIONS : resolveValue(loop.max_iterations, context);
    condition = resolveValue(loop.while ?? loop.until, context);
  } catch (error) {
    if (!(error instanceof TemplateResolutionError)) throw error;
    return fail('LOOP_CONDITION_UNRESOLVED', `node '${node.id}' loop: ${error.message}`);
  }
  const cap = typeof max === 'string' && /^\d+$/.test(max.trim()) ? Number(max) : max;
  if (typeof cap !== 'number' || !Number.isInteger(cap) || cap < 1) {
    return fail('LOOP_MAX_INVALID', `node '${node.id}' loop.max_iterations is ${JSON.stringify(max)}, not a whole number of 1 or more`);
  }
  const value = truth(condition);
  const named = loop.while ?? loop.until;
  if (value === undefined) {
    return fail(
      'LOOP_CONDITION_NOT_BOOLEAN',
      `node '${node.id}' loop ${loop.while ? 'while' : 'until'} ${named} is ${JSON.stringify(condition).slice(0, 80)}, which is neither true nor false: compute a boolean output in the node and name it`,
    );
  }
  const goOn = loop.while !== undefined ? value : !value;
  if (!goOn) return { kind: 'stop', stopped: 'condition' };
  return iteration >= cap ? { kind: 'stop', stopped: 'max_iterations' } : { kind: 'again' };
};
