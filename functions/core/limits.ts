import { builtOnFirstUse } from './lazy-schema.ts';
import * as z from './zod.ts';

/** Bounds on what a workflow and a run may use; each has a default and an environment variable. */
export const LimitsSchema = builtOnFirstUse(() =>
  z.object({
    /** Size of the workflow JSON. */
    maxIrBytes: z.int().check(z.positive()),
    maxNodes: z.int().check(z.positive()),
    /** Nesting of objects and arrays anywhere in the workflow (params, defaults, mappings). */
    maxDepth: z.int().check(z.positive()),
    /** Length of any one string in the workflow. */
    maxStringChars: z.int().check(z.positive()),
    /** Size of one node's params as written in the workflow. */
    maxParamsBytes: z.int().check(z.positive()),
    /** Bytes of stdout and of stderr a shell node keeps. */
    maxOutputBytes: z.int().check(z.positive()),
    maxHttpResponseBytes: z.int().check(z.positive()),
    /** Progress events one run may write. */
    maxEvents: z.int().check(z.positive()),
    /** Node visits (executed, not replayed) one run may make: a cycle with no exit stops here. */
    maxNodeVisits: z.int().check(z.positive()),
    /** Items one batch node may run. */
    maxBatchItems: z.int().check(z.positive()),
    /** Batch item records one run may write, over all its batches and their attempts. */
    maxItemRecords: z.int().check(z.positive()),
  }),
);
export type Limits = z.infer<typeof LimitsSchema>;

export const DEFAULT_LIMITS: Limits = {
  maxIrBytes: 4 * 1024 * 1024,
  maxNodes: 10_000,
  maxDepth: 64,
  maxStringChars: 1_000_000,
  maxParamsBytes: 1024 * 1024,
  maxOutputBytes: 10 * 1024 * 1024,
  maxHttpResponseBytes: 10 * 1024 * 1024,
  maxEvents: 100_000,
  maxNodeVisits: 10_000,
  maxBatchItems: 10_000,
  maxItemRecords: 100_000,
};

/** The environment variable that sets each limit. */
export const LIMIT_VARIABLES: Readonly<Record<keyof Limits, string>> = {
  maxIrBytes: 'FLOWMEND_MAX_IR_BYTES',
  maxNodes: 'FLOWMEND_MAX_NODES',
  maxDepth: 'FLOWMEND_MAX_DEPTH',
  maxStringChars: 'FLOWMEND_MAX_STRING_CHARS',
  maxParamsBytes: 'FLOWMEND_MAX_PARAMS_BYTES',
  maxOutputBytes: 'FLOWMEND_MAX_OUTPUT_BYTES',
  maxHttpResponseBytes: 'FLOWMEND_MAX_HTTP_RESPONSE_BYTES',
  maxEvents: 'FLOWMEND_MAX_EVENTS',
  maxNodeVisits: 'FLOWMEND_MAX_NODE_VISITS',
  maxBatchItems: 'FLOWMEND_MAX_BATCH_ITEMS',
  maxItemRecords: 'FLOWMEND_MAX_ITEM_RECORDS',
};

export class LimitConfigError extends Error {
  override readonly name = 'LimitConfigError';
}

/** The limits, with any set in `env` (the caller passes its environment; core reads none). */
export function limitsFrom(env: Readonly<Record<string, string | undefined>>): Limits {
  const limits: Limits = { ...DEFAULT_LIMITS };
  for (const [key, variable] of Object.entries(LIMIT_VARIABLES) as [keyof Limits, string][]) {
    const text = env[variable];
    if (text === undefined || text === '') continue;
    const value = Number(text);
    if (!Number.isSafeInteger(value) || value <= 0) throw new LimitConfigError(`${variable} must be a positive whole number, not ${JSON.stringify(text)}`);
    limits[key] = value;
  }
  return limits;
}
