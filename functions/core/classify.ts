import { classifyBusinessError, findBusinessError, formatBusinessError } from './business-errors.ts';
import { classifyHttpStatus } from './http-status.ts';
import type { ClassificationRules } from './ir.ts';
import { openJsonText } from './json-text.ts';
import type { NodeCapabilities, NodeError, RunnerResult } from './node-type.ts';
import { isRetryableErrorName, LAMBDA_THROTTLED, retryWaitS, THROTTLE_RETRY } from './retry-policy.ts';
import type { RunError } from './run-model.ts';
import type { TaskError } from './state-io.ts';

/**
 * How the engine treats a node's outcome (DESIGN section 5):
 * success routes on the action; warning is recorded as completed with action `error` and never repaired;
 * error is repairable; fatal fails the run without repair (retries exhausted, configuration, bugs).
 */
export type Outcome =
  | { kind: 'success'; action: string }
  | { kind: 'warning'; error: RunError }
  | { kind: 'error'; error: RunError }
  | { kind: 'fatal'; error: RunError };

export interface ClassifyInput {
  nodeId: string;
  nodeType: string;
  result?: RunnerResult;
  /** What the state machine's Catch caught, when the runner threw. */
  taskError?: TaskError;
  rules?: ClassificationRules;
  /** What the node's type declares; `apiResponse` has its 2xx responses inspected for business errors. */
  capabilities?: NodeCapabilities;
}

const SAMPLE_CHARS = 500;

/** A bounded text sample of a body, for messages and error details. */
export const sampleOf = (value: unknown, chars = SAMPLE_CHARS): string => {
  const whole = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  return whole.length <= chars ? whole : `${whole.slice(0, chars)}… (${whole.length} chars)`;
};

/** Reads a Step Functions Cause: a JSON string from Lambda ({errorType, errorMessage}), plain text locally. */
export const parseTaskCause = (cause: string | undefined): { message: string; details?: Record<string, unknown> } => {
  if (!cause) return { message: 'no cause given' };
  try {
    const parsed: unknown = JSON.parse(cause);
    if (parsed && typeof parsed === 'object' && 'errorMessage' in parsed) {
      const message = String((parsed as { errorMessage: unknown }).errorMessage);
      return { message, details: parsed as Record<string, unknown> };
    }
  } catch {
    // plain text, as aws-local-stepfunctions gives it
  }
  return { message: cause };
};

/** A runner Lambda throttled through every retry: the node did not run, and a resume runs it. */
export const throttledError = (nodeId: string, nodeType: string): RunError => ({
  node_id: nodeId,
  category: 'transient',
  code: 'RUNNER_THROTTLED',
  message: `did not run: the ${nodeType} runner Lambda was throttled (${LAMBDA_THROTTLED}) through every retry (about ${retryWaitS(THROTTLE_RETRY)} s); resume the run when it has capacity, or raise its concurrency (runnerConcurrency, or the account's quota)`,
  fixable: false,
});

const classifyTaskError = (nodeId: string, nodeType: string, taskError: TaskError): Outcome => {
  if (taskError.Error === LAMBDA_THROTTLED) return { kind: 'fatal', error: throttledError(nodeId, nodeType) };
  const { message, details } = parseTaskCause(taskError.Cause);
  // A retryable kind that reached the Catch was retried already: its retries are exhausted.
  const transient = isRetryableErrorName(taskError.Error);
  return {
    kind: 'fatal',
    error: {
      node_id: nodeId,
      category: transient ? 'transient' : 'non_repairable',
      code: transient ? 'RETRIES_EXHAUSTED' : taskError.Error,
      message: transient ? `${message} (retries exhausted)` : `${taskError.Error}: ${message}`,
      fixable: false,
      ...(details ? { details } : {}),
    },
  };
};

const withDetails = (details: Record<string, unknown> | undefined) => (details ? { details } : {});

/** An MCP tool result with `isError: true`: judged by its text like an API body's business error. */
const classifyMcpToolError = (nodeId: string, error: NodeError, rules: ClassificationRules | undefined): Outcome => {
  const text = typeof error.details?.text === 'string' && error.details.text.trim() !== '' ? error.details.text : error.message;
  const found = findBusinessError(openJsonText(error.details?.structured ?? text)) ?? { message: text };
  const base = { node_id: nodeId, code: error.code, ...withDetails(error.details) };
  return classifyBusinessError(found, rules) === 'warning'
    ? { kind: 'warning', error: { ...base, category: 'non_repairable', message: formatBusinessError(found), fixable: false } }
    : { kind: 'error', error: { ...base, category: 'execution_failure', message: error.message, fixable: true } };
};

const classifyFailure = (nodeId: string, error: NodeError, rules: ClassificationRules | undefined): Outcome => {
  if (error.code === 'MCP_TOOL_ERROR') return classifyMcpToolError(nodeId, error, rules);
  // A command whose starting process died (serve's command helper, nodes/shell.ts): nothing in the workflow to
  // repair; the run stops, and a resume runs the node again, as after a crash of the process running it.
  if (error.code === 'COMMAND_LOST')
    return {
      kind: 'fatal',
      error: { node_id: nodeId, category: 'transient', code: error.code, message: error.message, fixable: false, ...withDetails(error.details) },
    };
  const status = error.details?.status_code;
  if (error.code === 'HTTP_STATUS' && typeof status === 'number') {
    const statusClass = classifyHttpStatus(status, rules);
    const base = { node_id: nodeId, code: error.code, message: error.message, ...withDetails(error.details) };
    if (statusClass === 'warning') return { kind: 'warning', error: { ...base, category: 'non_repairable', fixable: false } };
    if (statusClass === 'transient') return { kind: 'fatal', error: { ...base, category: 'transient', fixable: false } };
  }
  return {
    kind: 'error',
    error: {
      node_id: nodeId,
      category: error.code === 'TEMPLATE_UNRESOLVED' ? 'template' : 'execution_failure',
      code: error.code,
      message: error.message,
      fixable: true,
      ...withDetails(error.details),
    },
  };
};

const classifyApiBody = (
  nodeId: string,
  nodeType: string,
  outputs: Record<string, unknown>,
  action: string,
  rules: ClassificationRules | undefined,
): Outcome => {
  // An MCP tool's result (structured, or text holding JSON) may carry the API's own `ok: false`.
  const body = nodeType === 'mcp' ? openJsonText(outputs.result) : outputs.response;
  const found = findBusinessError(body);
  if (found === undefined) return { kind: 'success', action };
  const details = {
    ...(typeof outputs.status_code === 'number' ? { status_code: outputs.status_code } : {}),
    ...(found.code === undefined ? {} : { api_code: found.code }),
    api_message: found.message,
    response: sampleOf(body),
  };
  const message = formatBusinessError(found);
  return classifyBusinessError(found, rules) === 'warning'
    ? { kind: 'warning', error: { node_id: nodeId, category: 'non_repairable', code: 'API_ERROR', message, fixable: false, details } }
    : { kind: 'error', error: { node_id: nodeId, category: 'execution_failure', code: 'API_ERROR', message, fixable: true, details } };
};

/** Classifies one node outcome. Pure: the same input always gives the same outcome. */
export const classifyOutcome = ({ nodeId, nodeType, result, taskError, rules, capabilities }: ClassifyInput): Outcome => {
  if (taskError) return classifyTaskError(nodeId, nodeType, taskError);
  if (!result) throw new Error(`classifyOutcome: node '${nodeId}' has neither a result nor an error`);
  switch (result.kind) {
    case 'ok':
      return capabilities?.apiResponse ? classifyApiBody(nodeId, nodeType, result.outputs, result.action, rules) : { kind: 'success', action: result.action };
    case 'failed':
      return classifyFailure(nodeId, result.error, rules);
  }
};
