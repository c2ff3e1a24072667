import type { ClassificationRules } from './ir.ts';
import type { RunnerResult } from './node-type.ts';
import type { RunError } from './run-model.ts';
import type { TaskError } from './step.ts';

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
}

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

export const classifyOutcome = ({ nodeId, result, taskError }: ClassifyInput): Outcome => {
  if (taskError) {
    const { message, details } = parseTaskCause(taskError.Cause);
    const transient = taskError.Error === 'TransientError';
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
  }
  if (!result) throw new Error(`classifyOutcome: node '${nodeId}' has neither a result nor an error`);
  switch (result.kind) {
    case 'ok':
      return { kind: 'success', action: result.action };
    case 'failed':
      return {
        kind: 'error',
        error: {
          node_id: nodeId,
          category: result.error.code === 'TEMPLATE_UNRESOLVED' ? 'template' : 'execution_failure',
          code: result.error.code,
          message: result.error.message,
          fixable: true,
          ...(result.error.details ? { details: result.error.details } : {}),
        },
      };
  }
};
