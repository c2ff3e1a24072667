import type { BatchState } from './batch/batch-state.ts';
import type { EngineDeps } from './engine-deps.ts';
import { RunBusyError, RunNotFoundError, StaleRunError } from './errors.ts';
import type { FlowStore } from './flow/flow-store.ts';
import { releaseHolds, slotsOfRun } from './flow/release-slots.ts';
import type { Workflow } from './ir.ts';
import { classifyRunInput, nodeRecordOf } from './node-record.ts';
import type { NodeRecord, Owner, RunEvent, RunEventFields, RunEventType, RunItem } from './run-model.ts';
import type { RunStore } from './run-store.ts';
import type { AdvanceInput, AdvanceOutcome } from './state-io.ts';
import type { Wakeups } from './waits/pause.ts';

/** Flow control as a cancel gives slots back: the keys' store, how long a waiter has to take a slot up, and how it is woken. */
export interface CancelFlow {
  store: FlowStore;
  grantMs: number;
  wakeups?: Wakeups | undefined;
  /** Why, when it is not a person's request: a debounced start superseded by a later one, a singleton's newer run. */
  reason?: { code: string; message: string };
}

/** How often cancel re-reads a run that a racing step moved on before its write landed. */
const CANCEL_ATTEMPTS = 10;

/**
 * How long before its start a try must be for a cancel to call it not started: a Wait state may end up to a
 * second early (moto cuts a timestamp's fraction), and CheckRun then reads the run before the runner starts.
 */
const NOT_STARTED_MARGIN_MS = 1_000;

export interface CancelResult {
  run: RunItem;
  /** The owner whose execution should now be stopped; undefined when the run had none or was already cancelled. */
  previousOwner?: Owner;
  /** The node that was in flight, now reported interrupted, and its step. */
  interruptedNode?: string;
  interruptedSeq?: number;
  /** The node in flight was still waiting for its start (a retry's or a rate limit's wait): CheckRun stops it before it runs. */
  notStarted?: boolean;
  /** A batch node was in flight (`interruptedNode`): how many of its items had started. */
  batch?: { started: number; total: number };
  /** A workflow node was in flight: its child run, cancelled with it. */
  child?: CancelResult;
  alreadyCancelled: boolean;
}

/**
 * Marks a running run cancelled with a write conditional on its owner (or seq), and drops the owner: the
 * execution's next write is conditional on that owner, so a step racing the cancel cannot move the run on.
 * A node in flight (or a batch) gets an `interrupted` record; a later resume walks from the start and runs it
 * again (a batch: the items that did not complete). `why` replaces "by request" (a child cancelled with its parent).
 */
export const cancelRun = async (
  store: RunStore,
  runId: string,
  now: number,
  flow?: CancelFlow,
  why?: { code: string; message: string },
): Promise<CancelResult> => {
  const reason = flow?.reason ?? why;
  for (let attempt = 0; attempt < CANCEL_ATTEMPTS; attempt += 1) {
    const run = await store.getRun(runId);
    if (!run) throw new RunNotFoundError(`no run '${runId}' (see GET /runs or \`flowmend runs\`)`);
    if (run.status === 'cancelled') return { run, alreadyCancelled: true };
    // An interrupted run (its execution died) may be cancelled too, so nobody resumes it by mistake; a waiting one
    // stops waiting, and a wake-up or an answer that comes later finds it cancelled and does nothing.
    if (run.status !== 'running' && run.status !== 'interrupted' && run.status !== 'waiting')
      throw new RunBusyError(`run ${runId} already ${run.status}; only a running, waiting or interrupted run can be cancelled`);
    const previousOwner = run.owner;
    const inFlight = run.current;
    // A batch's items run with no node in flight: the batch is what the cancel cuts.
    const batch = inFlight ? undefined : run.batch;
    const events: RunEvent[] = [];
    const event = <T extends RunEventType>(type: T, fields: RunEventFields<T>): void => {
      events.push({ runId, key: String(run.eventSeq).padStart(8, '0'), at: now, type, ...fields } as RunEvent);
      run.eventSeq += 1;
    };
    const waited = run.status === 'waiting';
    const notStarted = inFlight !== undefined && !waited && inFlight.startedAt - now > NOT_STARTED_MARGIN_MS;
    const try_ = inFlight?.attempt === undefined ? '' : ` (try ${inFlight.attempt})`;
    const slots = slotsOfRun(run);
    delete run.holds;
    if (inFlight) run.current = { ...inFlight, interrupted: true };
    const cutNode = inFlight?.nodeId ?? batch?.nodeId;
    event('run_cancelled', {
      ...(cutNode ? { nodeId: cutNode } : {}),
      message: reason
        ? reason.message
        : inFlight
          ? `cancelled by request while '${inFlight.nodeId}' was ${waited ? 'waiting' : notStarted ? `waiting to start${try_}` : 'running'}`
          : batch
            ? `cancelled by request while batch '${batch.nodeId}' ran (${batch.next} of ${batch.range.count} items started)`
            : 'cancelled by request',
    });
    delete run.wait;
    run.status = 'cancelled';
    run.lastError = {
      ...(cutNode ? { node_id: cutNode } : {}),
      category: 'non_repairable',
      code: reason?.code ?? 'CANCELLED',
      message: reason?.message ?? 'the run was cancelled by request',
      fixable: false,
    };
    delete run.owner;
    run.updatedAt = now;
    // Events first, as the engine writes them: a lost race leaves events the winner's keys overwrite.
    await store.appendEvents(events);
    try {
      await store.putRun(run, previousOwner ? { ownerId: previousOwner.id, seq: run.seq } : { seq: run.seq });
    } catch (error) {
      if (error instanceof StaleRunError) continue;
      throw error;
    }
    // Its slots and its place in a queue go to the runs that wait for them; without a flow store, when their leases run out.
    if (flow && slots.length > 0) await releaseHolds(store, flow.wakeups, flow, slots, now);
    if (inFlight) await recordInterrupted(store, run, inFlight, now);
    if (batch) await recordBatchInterrupted(store, run, batch, now);
    // A batch over a workflow node has no node in flight: the child run of its item in flight is cancelled with it.
    const child = inFlight
      ? await cancelChildOf(store, run, inFlight, now)
      : batch?.child
        ? await cancelChild(store, run, batch.nodeId, batch.child, now)
        : undefined;
    return {
      run,
      alreadyCancelled: false,
      ...(previousOwner ? { previousOwner } : {}),
      ...(inFlight ? { interruptedNode: inFlight.nodeId, interruptedSeq: inFlight.seq } : {}),
      ...(batch ? { interruptedNode: batch.nodeId, interruptedSeq: batch.seq, batch: { started: batch.next, total: batch.range.count } } : {}),
      ...(notStarted ? { notStarted } : {}),
      ...(child ? { child } : {}),
    };
  }
  throw new RunBusyError(`run ${runId} kept moving on while it was being cancelled; retry`);
};

export const interruptedRecord = (run: RunItem, inFlight: NonNullable<RunItem['current']>, now: number): NodeRecord => ({
  runId: run.runId,
  seq: inFlight.seq,
  nodeId: inFlight.nodeId,
  nodeType: inFlight.nodeType,
  visit: inFlight.visit,
  status: 'interrupted',
  cacheKey: inFlight.cacheKey,
  sideEffects: inFlight.sideEffects,
  irVersion: run.irVersion,
  startedAt: inFlight.startedAt,
  // A node cancelled while it waited for its start (a retry's or a rate limit's wait) never ran.
  finishedAt: Math.max(now, inFlight.startedAt),
  durationMs: Math.max(0, now - inFlight.startedAt),
  interrupted: true,
});

const recordInterrupted = async (store: RunStore, run: RunItem, inFlight: NonNullable<RunItem['current']>, now: number): Promise<void> => {
  try {
    // Only where the execution left no record: a result that did land stays the truth.
    await store.putRecord(interruptedRecord(run, inFlight, now), null);
  } catch (error) {
    if (!(error instanceof StaleRunError)) throw error;
  }
};

/** The batch's record (written `running` when it started) says it was cut; it keeps its item range for a resume's replay. */
const recordBatchInterrupted = async (store: RunStore, run: RunItem, batch: BatchState, now: number): Promise<void> => {
  const record: NodeRecord = {
    runId: run.runId,
    seq: batch.seq,
    nodeId: batch.nodeId,
    nodeType: batch.nodeType,
    visit: batch.visit,
    status: 'interrupted',
    cacheKey: '',
    sideEffects: batch.sideEffects,
    irVersion: run.irVersion,
    startedAt: batch.startedAt,
    finishedAt: now,
    durationMs: Math.max(0, now - batch.startedAt),
    interrupted: true,
    batch: batch.range,
    error: { code: 'CANCELLED', message: `cancelled after ${batch.next} of ${batch.range.count} items had started` },
  };
  await store.putRecord(record, 'running').catch((error: unknown) => {
    // The batch ended (its record is final) before the cancel landed: that record stays the truth.
    if (!(error instanceof StaleRunError)) throw error;
  });
};

/** A workflow node in flight has a child run that the same execution drives: it is cancelled with its parent, and says so. */
const cancelChildOf = async (store: RunStore, run: RunItem, inFlight: NonNullable<RunItem['current']>, now: number): Promise<CancelResult | undefined> => {
  const child = run.children?.find((c) => c.nodeId === inFlight.nodeId && c.visit === inFlight.visit && c.index === undefined);
  return child ? cancelChild(store, run, inFlight.nodeId, child.runId, now) : undefined;
};

const cancelChild = async (store: RunStore, run: RunItem, nodeId: string, childRunId: string, now: number): Promise<CancelResult | undefined> => {
  try {
    return await cancelRun(store, childRunId, now, undefined, {
      code: 'CANCELLED',
      message: `cancelled with its parent run ${run.runId} (node '${nodeId}')`,
    });
  } catch (error) {
    // A child that already ended (or is gone) has nothing to cancel; its parent's resume reads its end.
    if (!(error instanceof RunBusyError) && !(error instanceof RunNotFoundError)) throw error;
    return undefined;
  }
};

/** What became of the node in flight at a cancel, as the process that ran it recorded. */
export type CancelledStep = 'finished' | 'stopped' | 'not_started' | 'unconfirmed';

/** The code on an interrupted record whose node the cancel stopped (its process group killed, its request aborted). */
export const STOPPED_BY_CANCEL = 'STOPPED_BY_CANCEL';
/** The code on an interrupted record whose try the cancel caught in its wait (a retry's, a rate limit's): it never started. */
export const NOT_STARTED_BY_CANCEL = 'NOT_STARTED_BY_CANCEL';

/** Writes the record of the step a cancel found in flight, over the cancel's own `interrupted` one (or before it lands). */
export const replaceInterruptedRecord = async (store: RunStore, record: NodeRecord): Promise<void> => {
  try {
    await store.putRecord(record, 'interrupted');
  } catch (failure) {
    if (!(failure instanceof StaleRunError)) throw failure;
    // The cancel's own record has not landed yet (it is written after the run item): this one comes first.
    await store.putRecord(record, null).catch((again: unknown) => {
      if (!(again instanceof StaleRunError)) throw again;
    });
  }
};

type AdvanceRunInput = Extract<AdvanceInput, { kind: 'run' }>;

/**
 * An execution reached Advance for a run cancelled while it ran a node (the cancel dropped its owner).
 * It records what it knows: a node that finished before the cancel reached it gets its real record (a
 * resume replays it instead of running its side effects again); one the cancel stopped keeps its
 * `interrupted` record, marked STOPPED_BY_CANCEL (a resume runs it again, as after a crash). Then the
 * execution ends with the cancel's error. Only for the step the cancel found in flight.
 */
export const settleCancelledStep = async (run: RunItem, input: AdvanceInput, deps: EngineDeps, loadIr: () => Promise<Workflow>): Promise<AdvanceOutcome> => {
  const error = run.lastError ?? { category: 'non_repairable', code: 'CANCELLED', message: 'the run was cancelled by request', fixable: false };
  const outcome: AdvanceOutcome = { kind: 'failed', runId: run.runId, owner: input.owner, error };
  const current = run.current;
  if (input.kind !== 'run' || current === undefined || current.seq !== input.seq) return outcome;
  const now = deps.now();
  const killed = input.result === undefined || (input.result.kind === 'failed' && input.result.error.code === 'ABORTED');
  let record: NodeRecord;
  if (killed) {
    record = {
      ...interruptedRecord(run, current, now),
      error: { code: STOPPED_BY_CANCEL, message: `'${current.nodeId}' was stopped by the cancel before it finished` },
    };
  } else {
    const { result, outcome: classified } = await classifyRunInput(deps, run, await loadIr(), current, input as AdvanceRunInput);
    const { interrupted: _interrupted, ...finished } = nodeRecordOf(run, current, classified, result, now);
    record = finished;
  }
  await replaceInterruptedRecord(deps.store, record);
  return outcome;
};

/**
 * Waits (bounded) for the process running the cancelled node to record what became of it. Answers
 * `unconfirmed` when nobody did in time: no live process ran it, or it did not notice the cancel yet.
 */
export const awaitCancelledStep = async (
  store: RunStore,
  runId: string,
  seq: number,
  wait: { readonly timeoutMs: number; readonly sleep: (ms: number) => Promise<void>; readonly pollMs?: number },
): Promise<CancelledStep> => {
  const pollMs = wait.pollMs ?? 100;
  for (let waited = 0; ; waited += pollMs) {
    const [record] = await store.getRecords(runId, [seq]);
    if (record !== undefined && record.status !== 'interrupted') return 'finished';
    if (record?.error?.code === STOPPED_BY_CANCEL) return 'stopped';
    if (record?.error?.code === NOT_STARTED_BY_CANCEL) return 'not_started';
    if (waited >= wait.timeoutMs) return 'unconfirmed';
    await wait.sleep(pollMs);
  }
};
