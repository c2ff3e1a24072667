import { builtOnFirstUse } from '../lazy-schema.ts';
import * as z from '../zod.ts';

const key = () =>
  z
    .string({ error: 'a flow-control "key" is a string, a template like "${customer_id}" or a fixed name like "github"' })
    .check(z.minLength(1), z.maxLength(200));

/** At most `limit` holders of `key` at once; the others wait their turn, in order of arrival. */
export const ConcurrencySchema = builtOnFirstUse(() =>
  z.strictObject({ key: key(), limit: z.int({ error: '"limit" is a whole number from 1 to 1000' }).check(z.gte(1), z.lte(1000)) }),
);
export type Concurrency = z.infer<typeof ConcurrencySchema>;

/** At most `limit` node starts of `key` in any `period_s` seconds (a sliding window; flow/rate-window.ts). */
export const RateLimitSchema = builtOnFirstUse(() =>
  z.strictObject({
    key: key(),
    limit: z.int({ error: '"limit" is a whole number from 1 to 1000' }).check(z.gte(1), z.lte(1000)),
    period_s: z.number({ error: '"period_s" is a number of seconds, more than 0 and at most 86400' }).check(z.gt(0), z.lte(86_400)),
  }),
);
export type RateLimit = z.infer<typeof RateLimitSchema>;

/** Starts of `key` within `period_s` of the last one fold into one run, which starts `period_s` after the last start, with its params. */
export const DebounceSchema = builtOnFirstUse(() =>
  z.strictObject({
    key: key(),
    period_s: z.number({ error: '"period_s" is a number of seconds, more than 0 and at most 86400' }).check(z.gt(0), z.lte(86_400)),
  }),
);
export type Debounce = z.infer<typeof DebounceSchema>;

/** One run of `key` at a time: a start while one runs is skipped, or cancels the running one. */
export const SingletonSchema = builtOnFirstUse(() =>
  z.strictObject({ key: key(), mode: z._default(z.enum(['skip', 'cancel-running'], { error: '"mode" is "skip" or "cancel-running"' }), 'skip') }),
);
export type Singleton = z.infer<typeof SingletonSchema>;

/**
 * The store's names of keys: a kind prefix, so that a run-level limit, a node-level limit and a rate limit
 * written with the same key never share (a run holding its run slot never waits on itself at a node).
 * Keys are otherwise global: two workflows that name the same key share it (put the workflow's name in
 * the key to keep it apart).
 */
export const flowKey = (kind: 'run' | 'node' | 'rate' | 'debounce' | 'singleton', key: string): string => `${kind}/${key}`;
