/** One reason of a cancelled transaction, as DynamoDB lists them (one per item, in request order). */
export interface CancellationReason {
  Code?: string;
  Message?: string;
  /** The item as stored, when the request asked for it (wire or plain form: see DynamoServiceError). */
  Item?: Record<string, unknown>;
}

// The SDK's standard retry mode classifies errors with these lists (@smithy/core's retry submodule).
const THROTTLING = new Set([
  'BandwidthLimitExceeded',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
]);
const TRANSIENT = new Set(['TimeoutError', 'RequestTimeout', 'RequestTimeoutException']);
/** Socket errors the SDK retries (timeouts, resets, refused connections, DNS hiccups). */
const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * An error DynamoDB answered with. `name` is the exception's short name (`ConditionalCheckFailedException`,
 * `TransactionCanceledException`, ...), as the SDK's exceptions are named, so stores inspect it as before.
 */
export class DynamoServiceError extends Error {
  override readonly name: string;
  readonly statusCode: number;
  /** For a failed condition with `ReturnValuesOnConditionCheckFailure: ALL_OLD`: the item as stored. */
  readonly item: Record<string, unknown> | undefined;
  /** For `TransactionCanceledException`: why each item of the transaction failed. */
  readonly cancellationReasons: CancellationReason[] | undefined;

  constructor(
    name: string,
    message: string,
    options: { statusCode: number; item?: Record<string, unknown> | undefined; cancellationReasons?: CancellationReason[] | undefined; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = name;
    this.statusCode = options.statusCode;
    this.item = options.item;
    this.cancellationReasons = options.cancellationReasons;
  }

  get throttling(): boolean {
    return this.statusCode === 429 || THROTTLING.has(this.name);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The error of a non-2xx answer. The JSON protocol names the exception in `__type`
 * (`com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException`) or the `x-amzn-errortype` header.
 */
export function dynamoErrorOf(statusCode: number, body: string, errorTypeHeader: string | undefined): DynamoServiceError {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  const fields = isRecord(parsed) ? parsed : {};
  const rawType = typeof fields.__type === 'string' ? fields.__type : (errorTypeHeader ?? '');
  const name = rawType.split(':')[0]?.split('#').at(-1) || (statusCode >= 500 ? 'InternalServerError' : `HTTP${statusCode}`);
  const message = typeof fields.message === 'string' ? fields.message : typeof fields.Message === 'string' ? fields.Message : body.slice(0, 300);
  return new DynamoServiceError(name, message || name, {
    statusCode,
    item: isRecord(fields.Item) ? fields.Item : undefined,
    cancellationReasons: Array.isArray(fields.CancellationReasons) ? (fields.CancellationReasons as CancellationReason[]) : undefined,
  });
}

/** Whether the SDK's standard retry mode would try again after this error: throttling, transient, any 5xx, socket errors. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof DynamoServiceError) return error.throttling || TRANSIENT.has(error.name) || error.statusCode >= 500;
  const code = isRecord(error) && typeof error.code === 'string' ? error.code : undefined;
  return (code !== undefined && NETWORK_CODES.has(code)) || (error instanceof Error && TRANSIENT.has(error.name));
}

/** Whether to back off as from throttling (a longer base delay, as the SDK does). */
export const isThrottling = (error: unknown): boolean => error instanceof DynamoServiceError && error.throttling;
