/**
 * Typed errors. `name` is a literal that the state machine's Retry/Catch match on (`ErrorEquals`),
 * `code` is stable for programs. Whether the same call may succeed later is a property of the class
 * (`static retryable`), read by `retryableErrorNames` (retry-policy.ts), from which the ASL Retry
 * lists are built: a kind that cannot recover is never retried.
 */
export abstract class FlowmendError extends Error {
  /** Whether the same call may succeed later. Kinds that may say so override it. */
  static readonly retryable: boolean = false;
  abstract override readonly name: string;
  abstract readonly code: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.details = options.details;
  }

  /** Whether the same call may succeed later (the class's `retryable`). */
  get retryable(): boolean {
    return (this.constructor as typeof FlowmendError).retryable;
  }
}

/** The workflow or a request does not parse, or fails static validation. Exit code 2 in the CLI. */
export class InvalidInputError extends FlowmendError {
  override readonly name = 'InvalidInputError';
  readonly code = 'INVALID_INPUT';
}

/** Another writer moved the run on (lost conditional write, or the run was taken over). */
export class StaleRunError extends FlowmendError {
  override readonly name = 'StaleRunError';
  readonly code = 'STALE_RUN';
}

/** The run does not exist. */
export class RunNotFoundError extends FlowmendError {
  override readonly name = 'RunNotFoundError';
  readonly code = 'RUN_NOT_FOUND';
}

/** A run is held by a live process or execution; it cannot be claimed now. */
export class RunBusyError extends FlowmendError {
  override readonly name = 'RunBusyError';
  readonly code = 'RUN_BUSY';
}

/**
 * A node failed in a way that may pass on a later try (5xx, timeout, connection refused).
 * Runners throw it so that the state machine's Retry backs off.
 */
export class TransientError extends FlowmendError {
  static override readonly retryable = true;
  override readonly name = 'TransientError';
  readonly code = 'TRANSIENT';
}

/** Configuration is missing or wrong (an API key, a region); no change to the workflow fixes it. */
export class ConfigurationError extends FlowmendError {
  override readonly name = 'ConfigurationError';
  readonly code = 'CONFIGURATION';
}

/** A failure of the run store or the blob store; the subclasses say which kind, and whether to retry. */
export abstract class StoreError extends FlowmendError {}

/** The store could not be reached, throttled the call, or failed it: the same call may pass later. */
export class StoreUnavailableError extends StoreError {
  static override readonly retryable = true;
  override readonly name = 'StoreUnavailableError';
  readonly code = 'STORE_UNAVAILABLE';
}

/** A stored item or blob does not read back as what was written (schema, size, checksum): retrying reads the same. */
export class CorruptItemError extends StoreError {
  override readonly name = 'CorruptItemError';
  readonly code = 'CORRUPT_ITEM';
}

/** An item is over the store's size limit (DynamoDB's 400 KB): the same write fails again. */
export class ItemTooLargeError extends StoreError {
  override readonly name = 'ItemTooLargeError';
  readonly code = 'ITEM_TOO_LARGE';
}

/** A blob key that would leave the blob directory: a bug or a forged reference, never worth a retry. */
export class BlobPathError extends StoreError {
  override readonly name = 'BlobPathError';
  readonly code = 'BLOB_PATH';
}

/**
 * An answer or a wake-up the run does not wait for: it is not waiting, waits for something else, was
 * answered already, or a callback's token does not match. Nothing was written.
 */
export class WaitNotOpenError extends FlowmendError {
  override readonly name = 'WaitNotOpenError';
  readonly code = 'WAIT_NOT_OPEN';
}
