/**
 * Typed errors. `name` is a literal that the state machine's Retry/Catch match on (`ErrorEquals`),
 * `code` is stable for programs, `retryable` says whether the same call may succeed later.
 */
export abstract class FlowmendError extends Error {
  abstract override readonly name: string;
  abstract readonly code: string;
  abstract readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.details = options.details;
  }
}

/** The workflow or a request does not parse, or fails static validation. Exit code 2 in the CLI. */
export class InvalidInputError extends FlowmendError {
  override readonly name = 'InvalidInputError';
  readonly code = 'INVALID_INPUT';
  readonly retryable = false;
}

/** Another writer moved the run on (lost conditional write, or the run was taken over). */
export class StaleRunError extends FlowmendError {
  override readonly name = 'StaleRunError';
  readonly code = 'STALE_RUN';
  readonly retryable = false;
}

/** The run does not exist. */
export class RunNotFoundError extends FlowmendError {
  override readonly name = 'RunNotFoundError';
  readonly code = 'RUN_NOT_FOUND';
  readonly retryable = false;
}

/** A run is held by a live process or execution; it cannot be claimed now. */
export class RunBusyError extends FlowmendError {
  override readonly name = 'RunBusyError';
  readonly code = 'RUN_BUSY';
  readonly retryable = false;
}

/**
 * A node failed in a way that may pass on a later try (5xx, timeout, connection refused).
 * Runners throw it so that the state machine's Retry (ErrorEquals: ["TransientError"]) backs off.
 */
export class TransientError extends FlowmendError {
  override readonly name = 'TransientError';
  readonly code = 'TRANSIENT';
  readonly retryable = true;
}

/** Configuration is missing or wrong (an API key, a region); no change to the workflow fixes it. */
export class ConfigurationError extends FlowmendError {
  override readonly name = 'ConfigurationError';
  readonly code = 'CONFIGURATION';
  readonly retryable = false;
}

/** The store or another dependency misbehaved in a way the engine cannot recover from. */
export class StoreError extends FlowmendError {
  override readonly name = 'StoreError';
  readonly code = 'STORE';
  readonly retryable = true;
}
