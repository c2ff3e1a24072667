import { FlowmendError, StaleRunError } from './errors.ts';
import type { RunError } from './run-model.ts';
import type { RunStore } from './run-store.ts';
import type { AdvanceOutcome } from './state-io.ts';

/**
 * Errors that leave the run as it is: another writer owns it now, or a dependency may answer on a
 * later try (the state machine retries; `resume` goes on from the last commit).
 */
const leavesRunAsIs = (error: unknown): boolean => error instanceof StaleRunError || (error instanceof FlowmendError && error.retryable);

/**
 * Records an unexpected error of an Advance call as the run's failure, so that `status` tells the
 * truth and `resume` starts from the last commit, instead of the run staying `running` forever. The
 * run item is read again: the failed call may have changed its copy halfway. Returns undefined when
 * the error must propagate (see `leavesRunAsIs`) or the failure could not be written either.
 */
export async function failOnUnexpected(store: RunStore, runId: string, owner: string, error: unknown, now: number): Promise<AdvanceOutcome | undefined> {
  if (leavesRunAsIs(error)) return undefined;
  const name = error instanceof Error ? error.name : 'Error';
  const message = error instanceof Error ? error.message : String(error);
  const runError: RunError = {
    category: 'execution_failure',
    code: error instanceof FlowmendError ? error.code : 'INTERNAL_ERROR',
    message: `flowmend stopped the run on an unexpected error: ${name}: ${message.slice(0, 2000)}`,
    fixable: false,
  };
  try {
    const run = await store.getRun(runId);
    if (!run || run.owner?.id !== owner || run.status !== 'running') return undefined;
    run.status = 'failed';
    run.lastError = runError;
    run.updatedAt = now;
    await store.appendEvents([{ runId, key: String(run.eventSeq).padStart(8, '0'), at: now, type: 'run_failed', message: runError.message }]);
    run.eventSeq += 1;
    await store.putRun(run, { ownerId: owner });
  } catch {
    return undefined;
  }
  return { kind: 'failed', runId, owner, error: runError };
}
