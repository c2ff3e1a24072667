import * as z from '../zod.ts';

/**
 * A key's rate window: the start times reserved last, oldest first, at most `limit` of them (older ones
 * cannot decide anything). A sliding window, not a token bucket: "10 per second" means that no second
 * holds more than 10 starts, which a bucket of 10 tokens refilled at 10 a second does not keep (it lets
 * 10 start at once and 9 more within the same second, as tokens come back).
 */
export interface RateWindow {
  reserved: number[];
}

const RateWindowSchema = z.object({ reserved: z.array(z.number()) });

export const readRateWindow = (body: unknown): RateWindow => {
  const parsed = RateWindowSchema.safeParse(body);
  return parsed.success ? { reserved: [...parsed.data.reserved] } : { reserved: [] };
};

/**
 * Reserves the earliest start at or after `now` that keeps every window of `periodMs` at `limit` starts or
 * fewer: now, unless the `limit`-th latest reservation is less than a period ago, then exactly a period after
 * it. Reservations only move forward (never before the latest), so the list stays sorted and a start never
 * overtakes one reserved before it. `quantumMs` rounds the start up to what the host's timer can wait for
 * (Step Functions' Wait state waits to the whole second).
 */
export const reserveStart = (
  current: RateWindow,
  request: { limit: number; periodMs: number; now: number; quantumMs?: number },
): { window: RateWindow; startAt: number } => {
  const reserved = current.reserved;
  const { limit, periodMs, now } = request;
  let startAt = Math.max(now, reserved.at(-1) ?? Number.NEGATIVE_INFINITY);
  if (reserved.length >= limit) startAt = Math.max(startAt, (reserved[reserved.length - limit] as number) + periodMs);
  const quantum = request.quantumMs ?? 1;
  if (quantum > 1 && startAt > now) startAt = Math.ceil(startAt / quantum) * quantum;
  return { window: { reserved: [...reserved, startAt].slice(-limit) }, startAt };
};
