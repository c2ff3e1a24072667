import { builtOnFirstUse } from '../lazy-schema.ts';
import * as z from '../zod.ts';

export const WAIT_TYPE = 'wait';
export const WAIT_FOR_EVENT_TYPE = 'wait-for-event';

/** The node types the engine pauses a run for, instead of handing them to a runner. */
export const isWaitType = (type: string): boolean => type === WAIT_TYPE || type === WAIT_FOR_EVENT_TYPE;

/** The longest wait flowmend takes (a year): a longer one is a mistake more often than a plan. */
export const MAX_WAIT_S = 366 * 86_400;

const seconds = (name: string) =>
  z
    .number({ error: `${name} is a number of seconds, e.g. 86400 for a day` })
    .check(z.gte(0, `${name} is 0 or more seconds`), z.lte(MAX_WAIT_S, `${name} is at most ${MAX_WAIT_S} seconds (366 days)`));

/** `wait`: `{"seconds": 86400}` or `{"until": "2026-12-01T09:00:00Z"}` (templates allowed; exactly one of the two). */
export const WaitParamsSchema = builtOnFirstUse(() =>
  z.strictObject({
    seconds: z.optional(seconds('seconds')),
    until: z.optional(z.iso.datetime({ offset: true, error: 'until is an ISO 8601 date and time with its offset, e.g. "2026-12-01T09:00:00Z"' })),
  }),
);
export type WaitParams = z.infer<typeof WaitParamsSchema>;

/** `wait-for-event`: waits for a callback's JSON payload; after `timeout_s` the node fails (non-repairable) on its `error` action. */
export const WaitForEventParamsSchema = builtOnFirstUse(() => z.strictObject({ timeout_s: z.optional(seconds('timeout_s')) }));
export type WaitForEventParams = z.infer<typeof WaitForEventParamsSchema>;

export const WAIT_OUTPUT_KEYS = ['waited_s', 'until', 'woke_at'] as const;
export const WAIT_FOR_EVENT_OUTPUT_KEYS = ['payload', 'received_at'] as const;
/** What an earlier node reads of a wait-for-event node before it waits: `${approve.callback_url}`. */
export const CALLBACK_KEYS = ['callback_url', 'callback_token'] as const;

/** The problem with a wait node's (resolved) params, if any: exactly one of `seconds` and `until`. */
export const waitParamsProblem = (params: Record<string, unknown>): string | undefined => {
  const given = ['seconds', 'until'].filter((key) => params[key] !== undefined);
  if (given.length === 1) return undefined;
  return given.length === 0 ? 'a wait node needs "seconds" or "until"' : 'a wait node takes "seconds" or "until", not both';
};

/** When a wait node with these (parsed) params started at `now` is due. */
export const waitDeadline = (params: WaitParams, now: number): number =>
  params.until !== undefined ? Date.parse(params.until) : now + Math.round((params.seconds ?? 0) * 1000);
