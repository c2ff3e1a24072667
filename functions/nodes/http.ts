import { createHash } from 'node:crypto';
import type { NodeRunner, RunContext, RunnerResult } from '../core/index.ts';
import { classifyHttpStatus, sampleOf, TransientError } from '../core/index.ts';
import { extractPath } from './extract-path.ts';
import { exchange, type HttpReply, ResponseTooLargeError } from './http-client.ts';
import { type HttpParams, HttpParamsSchema, httpSpec, methodOf, SIDE_EFFECT_METHODS, timeoutOf } from './http-spec.ts';
import { monotonicMs } from './monotonic-clock.ts';

const MESSAGE_BODY_CHARS = 200;
const METHODS = new Set(['GET', 'HEAD', 'OPTIONS', ...SIDE_EFFECT_METHODS]);

/** Connection failures worth a retry; a host that does not resolve (ENOTFOUND) is a workflow mistake instead. */
const TRANSIENT_NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED']);

/** Same run, node and cache key -> same key, so a re-run of an interrupted call is recognisable by the server. */
export const idempotencyKey = (context: Pick<RunContext, 'runId' | 'nodeId' | 'cacheKey'>): string =>
  createHash('sha256').update(`${context.runId}\u0000${context.nodeId}\u0000${context.cacheKey}`).digest('hex');

const failed = (code: string, message: string, details?: Record<string, unknown>, durationMs = 0): RunnerResult => ({
  kind: 'failed',
  error: { code, message, ...(details ? { details } : {}) },
  durationMs,
});

/** The URL as written, less a `user:password@` part. */
const withoutUserInfo = (text: string): string => text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1');

const buildUrl = (params: HttpParams): URL | string => {
  let url: URL;
  try {
    url = new URL(params.url);
  } catch {
    return `Invalid url "${params.url}": an absolute http(s) URL is needed`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `Invalid url "${params.url}": only http and https are supported`;
  // As fetch refused them: user:password in a URL would go out as Basic auth from a string that is logged and shown.
  if (url.username !== '' || url.password !== '') {
    return `Invalid url "${withoutUserInfo(params.url)}": a user or password in the URL is not sent; use auth_token, api_key or an Authorization header`;
  }
  for (const [name, value] of Object.entries({ ...params.params, ...params.query })) {
    if (value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(item));
  }
  return url;
};

const buildRequest = (params: HttpParams, method: string, context: RunContext): { headers: Record<string, string>; body?: string } => {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(params.headers ?? {})) headers[name.toLowerCase()] = String(value);
  if (params.auth_token !== undefined) headers.authorization ??= `Bearer ${params.auth_token}`;
  if (params.api_key !== undefined) headers[(params.api_key_header ?? 'X-API-Key').toLowerCase()] ??= params.api_key;
  if (SIDE_EFFECT_METHODS.has(method)) headers['idempotency-key'] ??= idempotencyKey(context);
  // The called service's spans join the run's trace under this visit (W3C Trace Context); a header the workflow sets wins.
  if (context.traceparent !== undefined) headers.traceparent ??= context.traceparent;
  if (params.body === undefined || params.body === null) return { headers };
  if (typeof params.body === 'string') {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    return { headers, body: params.body };
  }
  headers['content-type'] ??= 'application/json';
  return { headers, body: JSON.stringify(params.body) };
};

const parseBody = (text: string, contentType: string | null): unknown => {
  if (text === '' || !contentType || !/[/+]json\b/i.test(contentType)) return text;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
};

/** The code of a network failure: Node's own (ECONNREFUSED...) or the client's (REDIRECT_FAILED). */
const networkCode = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** Bytes of a response body kept before the request is abandoned (default 10 MiB, as a shell node's output). */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export interface HttpRunnerOptions {
  /** Largest response body read, in bytes; a larger one fails the node with RESPONSE_TOO_LARGE. */
  readonly maxResponseBytes?: number;
}

export const makeHttpRunner = (options: HttpRunnerOptions = {}): NodeRunner<typeof HttpParamsSchema> => {
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const run = async (params: HttpParams, context: RunContext): Promise<RunnerResult> => {
    const rules = context.classification;
    const method = methodOf(params);
    if (!METHODS.has(method)) return failed('PARAMS_INVALID', `Unsupported method "${params.method}": use one of ${[...METHODS].join(', ')}`);
    const url = buildUrl(params);
    if (typeof url === 'string') return failed('PARAMS_INVALID', url, { url: withoutUserInfo(params.url) });
    const request = buildRequest(params, method, context);
    if (request.body !== undefined && (method === 'GET' || method === 'HEAD')) {
      return failed('PARAMS_INVALID', `A ${method} request cannot have a body: set method to POST, or move the data to query`);
    }
    if (context.signal?.aborted) return failed('ABORTED', 'Request not sent: the run was cancelled');

    const timeoutS = timeoutOf(params);
    const target = `${method} ${url.origin}${url.pathname}`;
    const timeoutSignal = AbortSignal.timeout(timeoutS * 1000);
    const signal = context.signal ? AbortSignal.any([timeoutSignal, context.signal]) : timeoutSignal;
    const started = monotonicMs();
    let response: HttpReply;
    try {
      response = await exchange(url, {
        method,
        headers: request.headers,
        signal,
        maxBytes: maxResponseBytes,
        ...(request.body === undefined ? {} : { body: request.body }),
      });
    } catch (error) {
      const durationMs = monotonicMs() - started;
      if (error instanceof ResponseTooLargeError) {
        return failed(
          'RESPONSE_TOO_LARGE',
          `Response of ${target} is larger than ${error.limit} bytes; flowmend stopped reading it. Ask for less (a page size, a filter), or raise FLOWMEND_MAX_HTTP_RESPONSE_BYTES`,
          { url: url.href, max_bytes: error.limit },
          durationMs,
        );
      }
      if (timeoutSignal.aborted) {
        throw new TransientError(`Request timed out after ${timeoutS} s: ${target}`, { cause: error, details: { url: url.href, timeout_s: timeoutS } });
      }
      if (context.signal?.aborted) return failed('ABORTED', `Request cancelled: ${target}`, undefined, durationMs);
      const code = networkCode(error);
      const reason = error instanceof Error ? error.message : String(error);
      if (code !== undefined && TRANSIENT_NETWORK_CODES.has(code)) {
        throw new TransientError(`Connection failed (${code}): ${target}`, { cause: error, details: { url: url.href, code } });
      }
      return failed(
        code === 'ENOTFOUND' ? 'HOST_NOT_FOUND' : 'REQUEST_FAILED',
        `Request failed: ${target}: ${reason}`,
        { url: url.href, ...(code ? { code } : {}) },
        durationMs,
      );
    }
    const durationMs = monotonicMs() - started;
    const { headers, text } = response;
    const body = parseBody(text, headers['content-type'] ?? null);
    const outputs = { status_code: response.status, headers, response: body, extracted: {} as Record<string, unknown> };

    const statusClass = classifyHttpStatus(response.status, rules);
    if (statusClass !== 'success') {
      const line = `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
      const message = text === '' ? line : `${line}: ${sampleOf(body, MESSAGE_BODY_CHARS)}`;
      const details = { status_code: response.status, url: url.href, method, response: sampleOf(body), headers };
      if (statusClass === 'transient') throw new TransientError(message, { details });
      return { kind: 'failed', error: { code: 'HTTP_STATUS', message, details }, outputs, durationMs };
    }

    for (const [name, path] of Object.entries(params.extract ?? {})) {
      const found = extractPath(body, path);
      if (found.found) {
        outputs.extracted[name] = found.value;
        continue;
      }
      const missing = typeof found.missing === 'number' ? `[${found.missing}]` : `"${found.missing}"`;
      const message =
        `extract "${name}": path ${path} not found: ${found.reached} has no ${missing}; ` +
        `available there: ${found.available.join(', ')}. Response: ${sampleOf(body)}`;
      const details = { name, path, reached: found.reached, missing: found.missing, available: found.available, response: sampleOf(body) };
      return { kind: 'failed', error: { code: 'EXTRACT_MISSING', message, details }, outputs, durationMs };
    }
    return { kind: 'ok', outputs, action: 'default', durationMs };
  };

  return { ...httpSpec, paramsSchema: HttpParamsSchema, run };
};

export const httpRunner: NodeRunner<typeof HttpParamsSchema> = makeHttpRunner();
