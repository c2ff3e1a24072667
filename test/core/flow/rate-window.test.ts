import { describe, expect, it } from 'vitest';
import { type RateWindow, reserveStart } from '../../../functions/core/flow/rate-window.ts';

/** Reserves `count` starts at the given request times and returns the start times. */
const reserveAll = (times: number[], limit: number, periodMs: number, quantumMs?: number): number[] => {
  let window: RateWindow = { reserved: [] };
  return times.map((now) => {
    const made = reserveStart(window, { limit, periodMs, now, ...(quantumMs ? { quantumMs } : {}) });
    window = made.window;
    return made.startAt;
  });
};

/** The most starts any half-open window [t, t + periodMs) holds (checked at every start, where the worst window begins). */
const busiestWindow = (starts: number[], periodMs: number): number => Math.max(...starts.map((t) => starts.filter((s) => s >= t && s < t + periodMs).length));

describe('reserveStart (a sliding window)', () => {
  it('lets `limit` start at once, then each next one exactly a period after the one `limit` before it', () => {
    const starts = reserveAll(Array(25).fill(0), 10, 1_000);
    expect(starts.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(starts.slice(10, 20)).toEqual(Array(10).fill(1_000));
    expect(starts.slice(20)).toEqual(Array(5).fill(2_000));
    expect(busiestWindow(starts, 1_000)).toBe(10);
  });

  it('holds no more than `limit` in any window for requests spread at random, and delays none more than it needs', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 48271) % 2_147_483_647;
      return seed / 2_147_483_647;
    };
    const times: number[] = [];
    for (let t = 0, i = 0; i < 300; i += 1) {
      t += Math.floor(random() * 150);
      times.push(t);
    }
    const starts = reserveAll(times, 10, 1_000);
    expect(busiestWindow(starts, 1_000)).toBeLessThanOrEqual(10);
    // Exact: a start later than its request is exactly a period after the start `limit` before it, or right after the one before.
    starts.forEach((s, i) => {
      if (s === times[i]) return;
      expect([(starts[i - 10] ?? Number.NaN) + 1_000, starts[i - 1]]).toContain(s);
    });
  });

  it('starts a request that finds a quiet window at once', () => {
    expect(reserveAll([0, 5_000, 10_000], 1, 1_000)).toEqual([0, 5_000, 10_000]);
  });

  it("rounds a delayed start up to the host timer's quantum (a Wait state waits to the second), never down", () => {
    expect(reserveAll([0, 0, 250], 1, 1_500, 1_000)).toEqual([0, 2_000, 4_000]);
  });
});
