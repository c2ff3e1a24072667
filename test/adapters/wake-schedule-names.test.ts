import { describe, expect, it } from 'vitest';
import { wakeScheduleName } from '../../functions/adapters/scheduler-wakeups.ts';

describe('wakeScheduleName', () => {
  it("gives a slot's grant a schedule of its own beside the wait's deadline (the same name would conflict and be dropped as a retry)", () => {
    const deadline = wakeScheduleName({ runId: 'r1', waitId: 'w1' });
    const grant = wakeScheduleName({ runId: 'r1', waitId: 'w1', reason: 'granted' });
    expect(grant).not.toBe(deadline);
    expect(wakeScheduleName({ runId: 'r1', waitId: 'w1', reason: 'granted' })).toBe(grant);
    expect(grant).toMatch(/^wake-[0-9a-f]{40}$/);
  });
});
