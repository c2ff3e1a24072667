import type { NodeTypeSpec } from '../core/index.ts';
import * as z from '../core/zod.ts';
import { EXTRACT_PATH_PATTERN } from './extract-path.ts';

/**
 * What the engine knows of the http node without sending anything: `flowmend validate`, the Advance
 * and StartRun Lambdas check and time http nodes from this, and only the runner (http.ts) brings the
 * request, body and extract code.
 */
const DEFAULT_TIMEOUT_S = 30;
export const SIDE_EFFECT_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const ScalarSchema = z.union([z.string(), z.number(), z.boolean()], { error: 'values must be strings, numbers or booleans' });
const QuerySchema = z.record(z.string(), z.union([ScalarSchema, z.array(ScalarSchema), z.null()]), {
  error: 'query must be an object of name: value (arrays repeat the name)',
});

export const HttpParamsSchema = z.strictObject({
  /** More header names whose values are credentials: validation refuses a literal value for them. */
  sensitive_headers: z.optional(z.array(z.string({ error: 'sensitive_headers lists header names' }))),
  url: z.string({ error: 'url is required: an http(s) URL' }).check(z.minLength(1, 'url must not be empty')),
  method: z.optional(z.string({ error: 'method must be a string such as "GET" or "POST"' })),
  headers: z.optional(z.record(z.string(), ScalarSchema, { error: 'headers must be an object of Name: value' })),
  query: z.optional(QuerySchema),
  /** pflow's spelling of query. */
  params: z.optional(QuerySchema),
  /** An object or array is sent as JSON, a string as text. */
  body: z.optional(z.unknown()),
  timeout_s: z.optional(z.number({ error: 'timeout_s must be a number of seconds' }).check(z.positive('timeout_s must be greater than 0'))),
  /** pflow's spelling of timeout_s. */
  timeout: z.optional(z.number({ error: 'timeout must be a number of seconds' }).check(z.positive('timeout must be greater than 0'))),
  extract: z.optional(
    z.record(z.string(), z.string().check(z.regex(EXTRACT_PATH_PATTERN, 'an extract path looks like "$.a.b[0].c"')), {
      error: 'extract must be an object of name: "$.path"',
    }),
  ),
  /** pflow's auth shortcuts: `Authorization: Bearer <auth_token>`, or `<api_key_header>: <api_key>`. */
  auth_token: z.optional(z.string()),
  api_key: z.optional(z.string()),
  api_key_header: z.optional(z.string().check(z.minLength(1))),
});
export type HttpParams = z.infer<typeof HttpParamsSchema>;

export const HTTP_OUTPUT_KEYS = ['status_code', 'headers', 'response', 'extracted'] as const;

export const timeoutOf = (params: Record<string, unknown>): number => {
  const value = params.timeout_s ?? params.timeout;
  return typeof value === 'number' && value > 0 ? value : DEFAULT_TIMEOUT_S;
};

export const methodOf = (params: { method?: unknown; body?: unknown }): string =>
  typeof params.method === 'string' ? params.method.toUpperCase() : params.body === undefined || params.body === null ? 'GET' : 'POST';

/** A method named by a template is not known statically, so it counts as side-effecting. */
export const httpSideEffects = (params: Record<string, unknown>): boolean => {
  if (params.method !== undefined && typeof params.method !== 'string') return true;
  const method = methodOf(params);
  return method.includes('${') || SIDE_EFFECT_METHODS.has(method);
};

export const httpSpec: NodeTypeSpec = {
  type: 'http',
  paramsSchema: HttpParamsSchema,
  outputKeys: HTTP_OUTPUT_KEYS,
  sideEffects: httpSideEffects,
  timeoutS: timeoutOf,
  capabilities: { apiResponse: true, classificationRules: true },
};
