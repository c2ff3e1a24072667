import {
  BlobPathError,
  ConfigurationError,
  CorruptItemError,
  type FlowmendError,
  InvalidInputError,
  ItemTooLargeError,
  RunNotFoundError,
  StaleRunError,
  StoreUnavailableError,
  TransientError,
} from './errors.ts';

export interface RetryPolicy {
  errors: string[];
  intervalSeconds: number;
  maxAttempts: number;
  backoffRate: number;
  /** Longest wait between two tries (ASL MaxDelaySeconds). */
  maxDelaySeconds?: number;
  /** Each wait drawn between 0 and its computed length (ASL JitterStrategy FULL). */
  jitter?: boolean;
}

type ErrorKinds = Readonly<Record<string, { readonly retryable: boolean; prototype: FlowmendError }>>;

/**
 * The error kinds a Task may throw, by the name the state machine matches on. The keys are written
 * out (not read from `Class.name`) so that a minifying bundler cannot change them; a test checks
 * that each key is its class's `name`.
 */
export const RUNNER_ERROR_KINDS: ErrorKinds = { TransientError, ConfigurationError, InvalidInputError };
export const ENGINE_ERROR_KINDS: ErrorKinds = {
  InvalidInputError,
  StaleRunError,
  RunNotFoundError,
  StoreUnavailableError,
  CorruptItemError,
  ItemTooLargeError,
  BlobPathError,
};

/** Names of the kinds whose class says the same call may pass later (`static retryable`). */
export const retryableErrorNames = (kinds: ErrorKinds): string[] =>
  Object.entries(kinds)
    .filter(([, kind]) => kind.retryable)
    .map(([name]) => name);

/** The ASL `Retry` of every runner Task: the kinds a runner throws that may pass on a later try. */
export const TRANSIENT_RETRY: RetryPolicy = { errors: retryableErrorNames(RUNNER_ERROR_KINDS), intervalSeconds: 1, maxAttempts: 3, backoffRate: 2 };

/** The ASL `Retry` of the Advance and Repair Tasks: an unavailable store, never a corrupt or oversized item. */
export const ENGINE_RETRY: RetryPolicy = { errors: retryableErrorNames(ENGINE_ERROR_KINDS), intervalSeconds: 1, maxAttempts: 3, backoffRate: 2 };

/**
 * Lambda platform hiccups (service errors) retried on every Lambda Task. They fail before or around the
 * call, never after the handler's own timeout, so they add waits, not whole attempts.
 */
export const LAMBDA_SERVICE_RETRY: RetryPolicy = {
  errors: ['Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException'],
  intervalSeconds: 1,
  maxAttempts: 3,
  backoffRate: 2,
};

/** A Lambda at its concurrency limit (reserved, or the account's) refuses the call: the function did not run. */
export const LAMBDA_THROTTLED = 'Lambda.TooManyRequestsException';

/**
 * Throttling, retried on every Lambda Task for about half a minute (waits of 1, 2, 4, 8 and 16 s), each wait
 * jittered so that the tasks a burst throttled do not all come back at once. Past that, a node's run
 * is interrupted, not failed (the engine's `LAMBDA_THROTTLED` branch): nothing ran, a resume runs it.
 */
export const THROTTLE_RETRY: RetryPolicy = {
  errors: [LAMBDA_THROTTLED],
  intervalSeconds: 1,
  maxAttempts: 5,
  backoffRate: 2,
  maxDelaySeconds: 16,
  jitter: true,
};

/** Seconds a Task waits between tries when every retry of a policy is used: interval * rate^i (capped) for each retry. */
export const retryWaitS = (policy: RetryPolicy): number => {
  let total = 0;
  for (let i = 0; i < policy.maxAttempts; i += 1)
    total += Math.min(policy.intervalSeconds * policy.backoffRate ** i, policy.maxDelaySeconds ?? Number.POSITIVE_INFINITY);
  return total;
};

/** Whether a runner error caught by the state machine is one its Retry already tried (retries exhausted). */
export const isRetryableErrorName = (name: string): boolean => TRANSIENT_RETRY.errors.includes(name);
