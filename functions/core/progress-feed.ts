import type { NodeRecord, RunEvent, RunItem, RunStatus } from './run-model.ts';
import { recordsOfRun } from './run-report.ts';
import type { RunStore } from './run-store.ts';
import * as z from './zod.ts';

/**
 * One line of a run's progress, as `GET /runs/{id}/events` and `flowmend logs` give it: the run's events
 * (started, cached, repairs, end) merged in time order with its finished node visits.
 */
/** The run's own event types, and those of node visits, which the feed builds from their records. */
export type ProgressEventType = RunEvent['type'] | 'node_started' | 'node_completed' | 'node_failed' | 'node_warning';

export interface ProgressEvent {
  type: ProgressEventType;
  at: string;
  node_id?: string;
  seq?: number;
  message?: string;
  data?: Record<string, unknown>;
  /** Node visits: how long it took and how it ended. */
  duration_ms?: number;
  repaired?: boolean;
  interrupted?: boolean;
}

export interface ProgressPage {
  events: ProgressEvent[];
  /** Pass as `after` for the next page; unchanged when nothing new was there. */
  cursor: string;
  status: RunStatus;
  /** Whether more events are already there (read the next page at once). */
  more: boolean;
}

/** `<last event key>.<last node visit seq>`: both sequences only grow, so a page never repeats or skips. */
export const ProgressCursorSchema = z.pipe(
  z.string().check(z.regex(/^[0-9]*\.[0-9]+$/, 'a cursor is the `cursor` of an earlier page, e.g. "00000004.2"')),
  z.transform((text) => {
    const [key = '', seq = '0'] = text.split('.');
    return { eventKey: key, seq: Number(seq) };
  }),
);

const STEP_EVENT: Record<Exclude<NodeRecord['status'], 'running'>, ProgressEventType> = {
  completed: 'node_completed',
  failed: 'node_failed',
  warning: 'node_warning',
  interrupted: 'node_interrupted',
};

/** The optional fields, read across the union of event shapes. */
type EventFields = Partial<{ nodeId: string; seq: number; message: string; data: Record<string, unknown> }>;

const fromEvent = (event: RunEvent): ProgressEvent => {
  const e = event as RunEvent & EventFields;
  return {
    type: e.type,
    at: new Date(e.at).toISOString(),
    ...(e.nodeId !== undefined ? { node_id: e.nodeId } : {}),
    ...(e.seq !== undefined ? { seq: e.seq } : {}),
    ...(e.message !== undefined ? { message: e.message } : {}),
    ...(e.data !== undefined ? { data: e.data } : {}),
  };
};

const fromStep = (s: NodeRecord & { status: Exclude<NodeRecord['status'], 'running'> }): ProgressEvent => ({
  type: STEP_EVENT[s.status],
  at: new Date(s.finishedAt ?? s.startedAt).toISOString(),
  node_id: s.nodeId,
  seq: s.seq,
  duration_ms: Math.round((s.durationMs ?? 0) * 10) / 10,
  ...(s.error ? { message: s.error.message } : {}),
  ...(s.action ? { data: { action: s.action } } : {}),
  ...(s.repaired ? { repaired: true } : {}),
  ...(s.interrupted ? { interrupted: true } : {}),
});

/**
 * The next page of a run's progress after `after` (from the start when undefined); undefined when the run
 * does not exist. It reads the events and records after the cursor only, so following a long run costs
 * what is new, not the run's length. `run`: the run item when the caller has just read it.
 */
export const readProgress = async (
  store: RunStore,
  runId: string,
  after: { eventKey: string; seq: number } | undefined,
  limit: number,
  run?: RunItem,
): Promise<ProgressPage | undefined> => {
  run ??= await store.getRun(runId);
  if (!run) return undefined;
  const events = await store.listEvents(runId, after?.eventKey || undefined);
  const steps: NodeRecord[] = [];
  // Visits are taken in seq order up to the first unfinished one, so the cursor never passes a visit still running.
  for (const s of await recordsOfRun(store, run, after?.seq ?? 0)) {
    if (s.item) continue;
    if (s.status === 'running') break;
    steps.push(s);
  }
  const merged = [
    ...events.map((e) => ({ at: e.at, order: 1, event: fromEvent(e), eventKey: e.key, seq: undefined as number | undefined })),
    ...steps.map((s) => ({
      at: s.finishedAt ?? s.startedAt,
      order: 0,
      event: fromStep(s as NodeRecord & { status: Exclude<NodeRecord['status'], 'running'> }),
      eventKey: undefined as string | undefined,
      seq: s.seq,
    })),
  ].sort((a, b) => a.at - b.at || a.order - b.order);
  const page = merged.slice(0, limit);
  let eventKey = after?.eventKey ?? '';
  let seq = after?.seq ?? 0;
  for (const item of page) {
    if (item.eventKey !== undefined) eventKey = item.eventKey;
    if (item.seq !== undefined) seq = item.seq;
  }
  return { events: page.map((p) => p.event), cursor: `${eventKey}.${seq}`, status: run.status, more: merged.length > limit };
};
