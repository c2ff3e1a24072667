import { describe, expect, it } from 'vitest';
import { acquireSlot, readSlots, releaseSlot, renewLease, type Slots } from '../../../functions/core/flow/slots.ts';

const T0 = 1_000_000;
const empty = (): Slots => readSlots(undefined);
const ask = (slots: Slots, id: string, now = T0, leaseUntil: number | null = now + 10_000) =>
  acquireSlot(slots, { holder: { id, runId: id }, limit: 2, now, leaseUntil, waitId: `w-${id}-${now}`, grantMs: 5_000 });

describe('acquireSlot', () => {
  it('grants up to the limit, then queues in order of arrival with the soonest lease expiry to retry at', () => {
    let slots = empty();
    for (const id of ['a', 'b']) {
      const made = ask(slots, id);
      expect(made.granted).toBe(true);
      slots = made.slots;
    }
    const c = ask(slots, 'c', T0 + 1, T0 + 20_000);
    expect(c).toMatchObject({ granted: false, position: 1, holders: 2, retryAt: T0 + 10_000 });
    const d = ask(c.slots, 'd', T0 + 2);
    expect(d).toMatchObject({ granted: false, position: 2 });
    expect(d.slots.waiters.map((w) => w.id)).toEqual(['c', 'd']);
  });

  it('renews the lease of a holder that asks again, without a second slot', () => {
    const first = ask(empty(), 'a');
    const again = ask(first.slots, 'a', T0 + 5_000, T0 + 99_000);
    expect(again.granted).toBe(true);
    expect(again.slots.holders).toEqual([{ id: 'a', runId: 'a', expiresAt: T0 + 99_000 }]);
  });

  it('frees the slot of a holder whose lease ran out (a killed holder) and hands it to the oldest waiter, not to a newcomer', () => {
    let slots = ask(ask(empty(), 'a').slots, 'b', T0, T0 + 50_000).slots;
    slots = ask(slots, 'c', T0 + 1).slots;
    const late = ask(slots, 'newcomer', T0 + 10_001);
    expect(late.granted).toBe(false);
    expect(late.promoted.map((p) => p.id)).toEqual(['c']);
    expect(late.slots.holders.map((h) => h.id)).toEqual(['b', 'c']);
    expect(late.slots.holders.find((h) => h.id === 'c')?.expiresAt).toBe(T0 + 10_001 + 5_000);
    expect(late).toMatchObject({ position: 1 });
  });

  it('keeps a waiter its place when it asks again (a wake-up at its retry time), under its new wait id', () => {
    let slots = ask(ask(empty(), 'a').slots, 'b').slots;
    slots = ask(slots, 'c', T0 + 1).slots;
    slots = ask(slots, 'd', T0 + 2).slots;
    const again = ask(slots, 'd', T0 + 3);
    expect(again).toMatchObject({ granted: false, position: 2 });
    expect(again.slots.waiters.map((w) => [w.id, w.waitId, w.since])).toEqual([
      ['c', `w-c-${T0 + 1}`, T0 + 1],
      ['d', `w-d-${T0 + 3}`, T0 + 2],
    ]);
  });

  it('never holds a lease for ever unless it is told to: null leases stay, timed ones run out', () => {
    const slots = ask(ask(empty(), 'a', T0, null).slots, 'b').slots;
    const later = ask(slots, 'c', T0 + 1_000_000);
    expect(later.granted).toBe(true);
    expect(later.slots.holders.map((h) => h.id)).toEqual(['a', 'c']);
  });
});

describe('releaseSlot', () => {
  it('gives the slot to the oldest waiter, and reports it to be woken', () => {
    let slots = ask(ask(empty(), 'a').slots, 'b').slots;
    slots = ask(slots, 'c', T0 + 1).slots;
    slots = ask(slots, 'd', T0 + 2).slots;
    const released = releaseSlot(slots, { holderId: 'a', now: T0 + 3, grantMs: 5_000 });
    expect(released.promoted.map((p) => [p.id, p.waitId])).toEqual([['c', `w-c-${T0 + 1}`]]);
    expect(released.slots.holders.map((h) => h.id)).toEqual(['b', 'c']);
    expect(released.slots.waiters.map((w) => w.id)).toEqual(['d']);
    // The promoted waiter's own acquire finds it holds the slot already.
    expect(ask(released.slots, 'c', T0 + 4).granted).toBe(true);
  });

  it('takes a cancelled waiter out of the queue, and changes nothing for a holder it does not know', () => {
    let slots = ask(ask(empty(), 'a').slots, 'b').slots;
    slots = ask(slots, 'c', T0 + 1).slots;
    expect(releaseSlot(slots, { holderId: 'c', now: T0 + 2, grantMs: 1 }).slots.waiters).toEqual([]);
    expect(releaseSlot(slots, { holderId: 'zz', now: T0 + 2, grantMs: 1 }).changed).toBe(false);
  });
});

describe('renewLease', () => {
  it('moves a present holder only', () => {
    const slots = ask(empty(), 'a').slots;
    expect(renewLease(slots, { holderId: 'a', until: null })?.holders[0]?.expiresAt).toBeNull();
    expect(renewLease(slots, { holderId: 'b', until: null })).toBeUndefined();
  });
});
