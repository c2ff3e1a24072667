import type { RunItem, RunLauncher, RunStore } from '../../core/index.ts';
import { createRun, InvalidInputError, type NewRun, StaleRunError, sameStoredValue } from '../../core/index.ts';

export interface StartOnceDeps {
  store: RunStore;
  launcher: Pick<RunLauncher, 'newOwner' | 'launch'>;
  now: () => number;
}

export interface StartedRun {
  run: RunItem;
  /** False when an earlier attempt of the same start already got the run going. */
  launched: boolean;
}

/**
 * Creates a run and launches its execution, once per run id. A retry of the same start (a Lambda
 * retried by its caller, a schedule event delivered twice) finds the run an earlier attempt wrote, and
 * launches it again only when no execution has advanced it yet; then under a new owner, so that an
 * execution the earlier attempt did start stops at its first Advance instead of running beside it.
 * The takeover is conditioned on the run as read, so it loses to a first Advance that commits meanwhile.
 */
export async function startRunOnce(deps: StartOnceDeps, spec: Omit<NewRun, 'owner' | 'now'>, attempt = 0): Promise<StartedRun> {
  const { store, launcher } = deps;
  const mode = spec.mode ?? 'express';
  const [original, existing] = await Promise.all([store.getIrVersion(spec.runId, 0), store.getRun(spec.runId)]);
  const same =
    (original === undefined || sameStoredValue(original.ir, spec.workflow)) &&
    (existing === undefined || (existing.workflowName === spec.workflowName && sameStoredValue(existing.params, spec.params)));
  if (!same) throw new InvalidInputError(`run id '${spec.runId}' is taken by a run of another workflow or with other params; leave runId out to get a new one`);

  if (existing === undefined) {
    // The earlier attempt's time, so that its workflow version item is written again unchanged.
    const now = original?.createdAt ?? deps.now();
    const owner = launcher.newOwner(spec.runId, now);
    try {
      const run = await createRun(store, { ...spec, mode, owner, now });
      await launcher.launch({ runId: spec.runId, owner, mode });
      return { run, launched: true };
    } catch (error) {
      // A concurrent attempt created it first: go on as its retry.
      if (error instanceof StaleRunError && attempt === 0) return startRunOnce(deps, spec, attempt + 1);
      throw error;
    }
  }
  if (existing.eventSeq > 0 || existing.seq > 0 || existing.status !== 'running') return { run: existing, launched: false };

  const now = deps.now();
  const owner = launcher.newOwner(spec.runId, now);
  const run: RunItem = { ...existing, owner, updatedAt: now };
  try {
    // Guarded by the state read, not the owner alone: the earlier attempt's execution may commit its
    // first step between our read and this write (same owner), and an owner-only guard would put the
    // run back to before that step and start a second execution beside the first (Express executions
    // have no name dedupe). Every commit writes an event, so eventSeq tells.
    await store.putRun(run, { seq: existing.seq, eventSeq: existing.eventSeq, ...(existing.owner === undefined ? {} : { ownerId: existing.owner.id }) });
  } catch (error) {
    if (!(error instanceof StaleRunError)) throw error;
    const moved = await store.getRun(spec.runId);
    if (moved === undefined) throw error;
    return { run: moved, launched: false };
  }
  await launcher.launch({ runId: spec.runId, owner, mode: existing.mode });
  return { run, launched: true };
}
