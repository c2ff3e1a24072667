import { answerWait, describeWait, EARLY_WAKE_TOLERANCE_MS, type RunItem, type Wait, WaitNotOpenError, type WaitReply } from '../../core/index.ts';
import type { ApiDeps } from './api-deps.ts';

export interface Answered {
  run: RunItem;
  wait: Wait;
  /** Whether an execution was started to continue the run; if not, `serve`'s next tick (or a repeated request) does. */
  continued: boolean;
}

/**
 * Records a wait's answer (an approval, a denial, a callback's event) and starts the execution that
 * continues the run. The answer is durable before the launch: a launch that fails leaves an answered
 * wait, which `serve` continues at its next tick, and which a repeated approval (or `flowmend resume`)
 * continues on AWS.
 */
export const answerAndContinue = async (deps: ApiDeps, runId: string, reply: WaitReply): Promise<Answered> => {
  const { run, wait } = await answerWait(deps.store, runId, reply, deps.now());
  try {
    await deps.launcher.launch({ runId, owner: deps.launcher.newOwner(runId, deps.now()), mode: run.mode, waitId: wait.id });
    return { run, wait, continued: true };
  } catch (error) {
    (deps.logError ?? console.error)(error);
    return { run, wait, continued: false };
  }
};

/**
 * `POST /runs/{id}/resume` of a waiting run: a wait that is answered or due gets an execution that continues
 * it (where nothing else would: a launch after an answer that failed, a wake-up lost on its way); any other
 * is refused, saying what the run waits for.
 */
export const continueWaitingRun = async (deps: ApiDeps, run: RunItem): Promise<Wait> => {
  const wait = run.wait;
  const due = wait !== undefined && (wait.answer !== undefined || (wait.until !== undefined && deps.now() >= wait.until - EARLY_WAKE_TOLERANCE_MS));
  if (!wait || !due)
    throw new WaitNotOpenError(`run ${run.runId} is waiting: ${wait ? describeWait(wait) : 'for a wake-up'}; it goes on when that is answered or due`);
  await deps.launcher.launch({ runId: run.runId, owner: deps.launcher.newOwner(run.runId, deps.now()), mode: run.mode, waitId: wait.id });
  return wait;
};
