import { RunBusyError, RunNotFoundError, StaleRunError } from './errors.ts';
import type { NodeRecord, Owner, RunEvent, RunEventFields, RunEventType, RunItem } from './run-model.ts';
import type { RunStore } from './run-store.ts';

/** How often cancel re-reads a run that a racing step moved on before its write landed. */
const CANCEL_ATTEMPTS = 10;

export interface CancelResult {
  run: RunItem;
  /** The owner whose execution should now be stopped; undefined when the run had none or was already cancelled. */
  previousOwner?: Owner;
  /** The node that was in flight, now reported interrupted. */
  interruptedNode?: string;
  alreadyCancelled: boolean;
}

/**
 * Marks a running run cancelled with a write conditional on its owner (or seq), and drops the owner: the
 * execution's next write is conditional on that owner, so a step racing the cancel cannot move the run on.
 * A node in flight gets an `interrupted` record; a later resume walks from the start and runs it again.
 */
export const cancelRun = async (store: RunStore, runId: string, now: number): Promise<CancelResult> => {
  for (let attempt = 0; attempt < CANCEL_ATTEMPTS; attempt += 1) {
    const run = await store.getRun(runId);
    if (!run) throw new RunNotFoundError(`no run '${runId}' (see GET /runs or \`flowmend runs\`)`);
    if (run.status === 'cancelled') return { run, alreadyCancelled: true };
    // An interrupted run (its execution died) may be cancelled too, so nobody resumes it by mistake.
    if (run.status !== 'running' && run.status !== 'interrupted')
      throw new RunBusyError(`run ${runId} already ${run.status}; only a running or interrupted run can be cancelled`);
    const previousOwner = run.owner;
    const inFlight = run.current;
    const events: RunEvent[] = [];
    const event = <T extends RunEventType>(type: T, fields: RunEventFields<T>): void => {
      events.push({ runId, key: String(run.eventSeq).padStart(8, '0'), at: now, type, ...fields } as RunEvent);
      run.eventSeq += 1;
    };
    if (inFlight) run.current = { ...inFlight, interrupted: true };
    event('run_cancelled', {
      ...(inFlight ? { nodeId: inFlight.nodeId } : {}),
      message: inFlight ? `cancelled by request while '${inFlight.nodeId}' was running` : 'cancelled by request',
    });
    run.status = 'cancelled';
    run.lastError = {
      ...(inFlight ? { node_id: inFlight.nodeId } : {}),
      category: 'non_repairable',
      code: 'CANCELLED',
      message: 'the run was cancelled by request',
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
    if (inFlight) await recordInterrupted(store, run, inFlight, now);
    if (inFlight) await cancelChildOf(store, run, inFlight, now);
    return { run, alreadyCancelled: false, ...(previousOwner ? { previousOwner } : {}), ...(inFlight ? { interruptedNode: inFlight.nodeId } : {}) };
  }
  throw new RunBusyError(`run ${runId} kept moving on while it was being cancelled; retry`);
};

const recordInterrupted = async (store: RunStore, run: RunItem, inFlight: NonNullable<RunItem['current']>, now: number): Promise<void> => {
  const record: NodeRecord = {
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
    finishedAt: now,
    durationMs: now - inFlight.startedAt,
    interrupted: true,
  };
  try {
    // Only where the execution left no record: a result that did land stays the truth.
    await store.putRecord(record, null);
  } catch (error) {
    if (!(error instanceof StaleRunError)) throw error;
  }
};

/** A workflow node in flight has a child run that the same execution drives: it is cancelled with its parent. */
const cancelChildOf = async (store: RunStore, run: RunItem, inFlight: NonNullable<RunItem['current']>, now: number): Promise<void> => {
  const child = run.children?.find((c) => c.nodeId === inFlight.nodeId && c.visit === inFlight.visit);
  if (!child) return;
  try {
    await cancelRun(store, child.runId, now);
  } catch (error) {
    // A child that already ended (or is gone) has nothing to cancel; its parent's resume reads its end.
    if (!(error instanceof RunBusyError) && !(error instanceof RunNotFoundError)) throw error;
  }
};
