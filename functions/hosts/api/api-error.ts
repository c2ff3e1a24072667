import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { FlowmendError, InvalidInputError, RunBusyError, RunNotFoundError, StaleRunError, WaitNotOpenError } from '../../core/index.ts';
import type * as z from '../../core/zod.ts';

/** The one error shape of the API: `{ "error": { "code", "message", "details" } }`. */
export interface ApiErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

/** An answer other than success, with its HTTP status; thrown by routes and turned into the body by `onError`. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const notFound = (what: string): ApiError => new ApiError(404, 'NOT_FOUND', `${what} does not exist`);

/** A zod failure at the edge: 400 naming each field and what it must be. */
export const invalidRequest = (where: string, error: z.core.$ZodError): ApiError =>
  new ApiError(
    400,
    'INVALID_REQUEST',
    `bad ${where}: ${error.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ')}`,
    { issues: error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
  );

/** Core errors as API answers; anything else is a bug and gets a 500 that says nothing about it. */
export const toApiError = (error: unknown): ApiError => {
  if (error instanceof ApiError) return error;
  if (error instanceof InvalidInputError) return new ApiError(422, 'INVALID_WORKFLOW', error.message, error.details ?? {});
  if (error instanceof RunNotFoundError) return new ApiError(404, 'NOT_FOUND', error.message);
  if (error instanceof RunBusyError || error instanceof StaleRunError) return new ApiError(409, 'CONFLICT', error.message);
  if (error instanceof WaitNotOpenError) return new ApiError(409, 'WAIT_NOT_OPEN', error.message, error.details ?? {});
  if (error instanceof FlowmendError && error.retryable) return new ApiError(503, 'UNAVAILABLE', 'the service could not complete the request; retry');
  return new ApiError(500, 'INTERNAL', 'internal error; the server log has the details');
};

export const sendError = (c: Context, error: ApiError): Response =>
  c.json({ error: { code: error.code, message: error.message, details: error.details } } satisfies ApiErrorBody, error.status);
