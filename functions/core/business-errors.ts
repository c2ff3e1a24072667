import type { ClassificationRules } from './ir.ts';

/** A business error reported inside a successful (2xx) API response body. */
export interface BusinessError {
  message: string;
  code?: string;
}

export type BusinessErrorClass = 'warning' | 'repairable';

type Obj = Record<string, unknown>;

const isObject = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string | undefined => {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value;
  if (typeof value === 'number') return String(value);
  return undefined;
};

/** The message of an `error`-like value: a string, or an object with `message` (or a code). */
const messageOf = (value: unknown): string | undefined => {
  if (isObject(value)) return text(value.message) ?? text(value.error_description) ?? text(value.code) ?? text(value.type);
  return text(value);
};

/** MCP tool results put their text in `content: [{type: 'text', text}]`. */
const contentText = (body: Obj): string | undefined => {
  if (!Array.isArray(body.content)) return undefined;
  const first: unknown = body.content.find((c) => isObject(c) && typeof c.text === 'string');
  return isObject(first) ? text(first.text) : undefined;
};

const codeOf = (body: Obj): string | undefined => {
  const nested = isObject(body.error) ? (text(body.error.code) ?? text(body.error.type)) : undefined;
  const code = text(body.error_code) ?? text(body.errorCode) ?? nested ?? text(body.code);
  return code === '0' ? undefined : code;
};

const FAILED_STATUSES = new Set(['error', 'failed', 'failure', 'fail']);

const failureMessage = (body: Obj): string | undefined => {
  if (body.ok === false) return messageOf(body.error) ?? messageOf(body.message) ?? 'API request failed';
  for (const flag of ['success', 'successful', 'succeeded'] as const) {
    if (body[flag] === false) return messageOf(body.error) ?? messageOf(body.message) ?? `API request failed (${flag}: false)`;
  }
  if (body.isError === true) return messageOf(body.error) ?? messageOf(body.message) ?? contentText(body) ?? 'API reported isError';
  if (typeof body.status === 'string' && FAILED_STATUSES.has(body.status.toLowerCase())) {
    return messageOf(body.message) ?? messageOf(body.error) ?? `API status: ${body.status}`;
  }
  return undefined;
};

/**
 * Finds a business error in a 2xx body: `ok:false`, `success:false`, `isError:true`,
 * `status:"error"`, GraphQL `errors[]`, or a non-empty `error`. `error:null`, `ok:true`,
 * `successful:true`, `status:"ok"` and `errors:[]` are success.
 * A `{successful: true, data}` envelope is opened first (the error may sit inside it).
 */
export const findBusinessError = (body: unknown): BusinessError | undefined => {
  if (!isObject(body)) return undefined;
  if (body.successful === true && isObject(body.data)) return findBusinessError(body.data);

  const withCode = (message: string, code = codeOf(body)): BusinessError => (code === undefined || code === message ? { message } : { message, code });

  const failed = failureMessage(body);
  if (failed !== undefined) return withCode(failed);

  if (Array.isArray(body.errors) && body.errors.length > 0) {
    const first: unknown = body.errors[0];
    const message = messageOf(first) ?? JSON.stringify(first);
    const extensions = isObject(first) && isObject(first.extensions) ? first.extensions : undefined;
    return withCode(message, text(extensions?.code) ?? codeOf(body));
  }
  const error = body.error;
  if (error !== undefined && error !== null && error !== false && messageOf(error) !== undefined) {
    return withCode(messageOf(error) as string);
  }
  if (isObject(error) && Object.keys(error).length > 0) return withCode(JSON.stringify(error));
  return undefined;
};

/** Lower case, with `_` and `-` read as spaces, so `channel_not_found` matches "not found". */
const normalise = (value: string): string => value.toLowerCase().replace(/[_-]+/g, ' ');

/** A bad request: a change to the workflow can fix it. Checked before the resource patterns. */
export const VALIDATION_PATTERNS: readonly string[] = [
  'invalid parameter',
  'invalid param',
  'invalid argument',
  'invalid input',
  'invalid format',
  'invalid request',
  'invalid value',
  'invalid json',
  'invalid type',
  'invalid field',
  'invalid arguments',
  'validation',
  'missing required',
  'missing parameter',
  'missing argument',
  'missing field',
  'is required',
  'are required',
  'field required',
  'required field',
  'required parameter',
  'must be a',
  'must be an',
  'should be a',
  'should be an',
  'input should be',
  'bad request',
  'bad user input',
  'malformed',
  'unknown field',
  'unknown parameter',
  'unexpected field',
  'parse failed',
  'cannot parse',
];

/** A resource, permission, auth, quota or rate limit problem: no change to the workflow fixes it. */
export const RESOURCE_PATTERNS: readonly string[] = [
  'not found',
  'notfound',
  'does not exist',
  "doesn't exist",
  'no such',
  'is archived',
  'unavailable',
  'permission',
  'access denied',
  'not allowed',
  'forbidden',
  'unauthorized',
  'unauthorised',
  'unauthenticated',
  'not authed',
  'not authenticated',
  'invalid auth',
  'invalid token',
  'invalid api key',
  'invalid credentials',
  'bad credentials',
  'token expired',
  'token revoked',
  'expired token',
  'missing scope',
  'insufficient scope',
  'account inactive',
  'rate limit',
  'ratelimit',
  'too many requests',
  'throttl',
  'quota',
  'resource exhausted',
  'limit exceeded',
  'usage limit',
];

const VALIDATION_STATUS = new Set([400, 405, 409, 413, 415, 422]);
const RESOURCE_STATUS = new Set([401, 403, 404, 410, 429]);

const matches = (haystacks: readonly string[], patterns: readonly string[] | undefined): boolean =>
  (patterns ?? []).some((p) => haystacks.some((h) => h.includes(normalise(p))));

/**
 * Warning (non-repairable) or repairable. Order: the workflow's repairable patterns, its warning
 * patterns, then the default validation patterns (they win over resource ones: "missing required
 * field" is a bad request), numeric status-like codes, then resource patterns; anything else is repairable.
 */
export const classifyBusinessError = (error: BusinessError, rules?: ClassificationRules): BusinessErrorClass => {
  const haystacks = [normalise(error.message), ...(error.code === undefined ? [] : [normalise(error.code)])];
  if (matches(haystacks, rules?.repairable_patterns)) return 'repairable';
  if (matches(haystacks, rules?.warning_patterns)) return 'warning';
  if (matches(haystacks, VALIDATION_PATTERNS)) return 'repairable';
  const numeric = error.code !== undefined && /^\d{3}$/.test(error.code) ? Number(error.code) : undefined;
  if (numeric !== undefined && VALIDATION_STATUS.has(numeric)) return 'repairable';
  if (numeric !== undefined && RESOURCE_STATUS.has(numeric)) return 'warning';
  if (matches(haystacks, RESOURCE_PATTERNS)) return 'warning';
  return 'repairable';
};

/** `API error: channel_not_found`, or with its code: `API error (UNAUTHORIZED): Invalid token`. */
export const formatBusinessError = (error: BusinessError): string =>
  error.code === undefined ? `API error: ${error.message}` : `API error (${error.code}): ${error.message}`;
