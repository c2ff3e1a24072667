import * as z from '../zod.ts';

/** A holder of a slot: a run (run-level) or one node of a run (node-level); `expiresAt` null while its run waits durably. */
export interface SlotHolder {
  id: string;
  runId: string;
  expiresAt: number | null;
}
/** A run waiting for a slot, in order of arrival; `waitId` names its wait, so that a grant wakes that wait and no other. */
export interface SlotWaiter {
  id: string;
  runId: string;
  waitId: string;
  since: number;
}
export interface Slots {
  holders: SlotHolder[];
  waiters: SlotWaiter[];
  /** The limit the last writer gave: a release promotes waiters up to it. */
  limit: number;
}

const SlotsSchema = z.object({
  holders: z.array(z.object({ id: z.string(), runId: z.string(), expiresAt: z.nullable(z.number()) })),
  waiters: z.array(z.object({ id: z.string(), runId: z.string(), waitId: z.string(), since: z.number() })),
  limit: z.int(),
});

/** A key's slots as stored; an absent or unreadable document is a key nobody holds (flow state is rebuilt by the runs that use it). */
export const readSlots = (body: unknown): Slots => {
  const parsed = SlotsSchema.safeParse(body);
  return parsed.success ? structuredClone(parsed.data) : { holders: [], waiters: [], limit: 1 };
};

/** A waiter that became a holder: its run is woken to take the slot up (flow/flow-step.ts). */
export type Promoted = SlotWaiter;

export type SlotDecision =
  | { granted: true; slots: Slots; promoted: Promoted[] }
  | { granted: false; slots: Slots; promoted: Promoted[]; position: number; holders: number; retryAt: number | undefined };

/**
 * Holders whose lease ran out leave (a crashed or killed holder); then waiters at the head of the queue
 * take free slots, each for `grantMs` (the time its wake-up has to reach it), and are returned to be woken.
 */
const settle = (slots: Slots, now: number, grantMs: number, except?: string): Promoted[] => {
  slots.holders = slots.holders.filter((h) => h.expiresAt === null || h.expiresAt > now);
  const promoted: Promoted[] = [];
  while (slots.holders.length < slots.limit && slots.waiters.length > 0 && slots.waiters[0]?.id !== except) {
    const next = slots.waiters.shift() as SlotWaiter;
    slots.holders.push({ id: next.id, runId: next.runId, expiresAt: now + grantMs });
    promoted.push(next);
  }
  return promoted;
};

/**
 * Takes (or keeps) a slot for `holder` until `leaseUntil`. Fair: a free slot goes to the oldest waiter,
 * so a newcomer only gets one when nobody waits before it; a holder asking again renews its lease. When
 * refused, the holder joins the queue (keeping its place if it was in it, under its new `waitId`) and
 * learns when a slot may free by a lease running out (`retryAt`: the soonest expiry).
 */
export const acquireSlot = (
  current: Slots,
  request: {
    holder: Omit<SlotHolder, 'expiresAt'>;
    limit: number;
    now: number;
    leaseUntil: number | null;
    waitId: string;
    grantMs: number;
    /** false: a refused holder does not join the queue (a singleton's start that is skipped). */
    queue?: boolean;
  },
): SlotDecision => {
  const slots = structuredClone(current);
  const { holder, now } = request;
  slots.limit = request.limit;
  const promoted = settle(slots, now, request.grantMs, holder.id);
  const held = slots.holders.find((h) => h.id === holder.id);
  if (held) {
    held.expiresAt = request.leaseUntil;
    slots.waiters = slots.waiters.filter((w) => w.id !== holder.id);
    return { granted: true, slots, promoted };
  }
  const place = slots.waiters.findIndex((w) => w.id === holder.id);
  if (slots.holders.length < slots.limit && place <= 0) {
    if (place === 0) slots.waiters.shift();
    slots.holders.push({ ...holder, expiresAt: request.leaseUntil });
    return { granted: true, slots, promoted };
  }
  const waiter: SlotWaiter = { ...holder, waitId: request.waitId, since: place >= 0 ? (slots.waiters[place] as SlotWaiter).since : now };
  if (place >= 0) slots.waiters[place] = waiter;
  else if (request.queue !== false) slots.waiters.push(waiter);
  const expiries = slots.holders.flatMap((h) => (h.expiresAt === null ? [] : [h.expiresAt]));
  return {
    granted: false,
    slots,
    promoted,
    position: place >= 0 ? place + 1 : slots.waiters.length,
    holders: slots.holders.length,
    retryAt: expiries.length > 0 ? Math.min(...expiries) : undefined,
  };
};

/** Gives `holderId`'s slot back (and its place in the queue, for a cancelled run); the freed slots go to the oldest waiters. */
export const releaseSlot = (
  current: Slots,
  request: { holderId: string; now: number; grantMs: number },
): { slots: Slots; promoted: Promoted[]; changed: boolean } => {
  const slots = structuredClone(current);
  const before = slots.holders.length + slots.waiters.length;
  slots.holders = slots.holders.filter((h) => h.id !== request.holderId);
  slots.waiters = slots.waiters.filter((w) => w.id !== request.holderId);
  const promoted = settle(slots, request.now, request.grantMs);
  return { slots, promoted, changed: promoted.length > 0 || slots.holders.length + slots.waiters.length !== before };
};

/** Moves an existing holder's lease (a run that paused durably keeps its slot for as long as it waits); a holder that is gone stays gone. */
export const renewLease = (current: Slots, request: { holderId: string; until: number | null }): Slots | undefined => {
  const slots = structuredClone(current);
  const held = slots.holders.find((h) => h.id === request.holderId);
  if (!held || held.expiresAt === request.until) return undefined;
  held.expiresAt = request.until;
  return slots;
};
