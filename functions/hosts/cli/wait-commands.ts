import { userInfo } from 'node:os';
import type { RunItem, RunReport, RunStore } from '../../core/index.ts';
import { answerWait, EARLY_WAKE_TOLERANCE_MS, loadRunReport, WaitNotOpenError } from '../../core/index.ts';
import type { LocalHost } from '../local/local-host.ts';
import { EXIT } from './cli-output.ts';

/**
 * The longest time wait `flowmend run` sits out in the terminal: past it, the run is left waiting and the
 * command returns (exit 4), since a terminal should not be held for a day; `serve` or `resume` goes on.
 */
export const HOLD_WAIT_MS = 10_000;

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** A run that paused on a short time wait is continued here, once due, so that `flowmend run` of it ends as a run does. */
export const holdShortWait = async (host: LocalHost, report: RunReport, holdMs = HOLD_WAIT_MS): Promise<RunReport> => {
  let current = report;
  for (let turn = 0; turn < 100; turn += 1) {
    const wait = current.waiting;
    if (current.status !== 'waiting' || wait?.kind !== 'time' || wait.until === undefined) return current;
    const left = Date.parse(wait.until) - Date.now();
    if (left > holdMs) return current;
    await sleep(Math.max(0, left));
    current = await host.wake(current.run_id, wait.wait_id);
  }
  return current;
};

/** Who answers from this terminal: the OS user, recorded with the answer. */
export const approver = (): string => {
  try {
    return userInfo().username;
  } catch {
    return 'cli';
  }
};

export type Continued = { ok: true; report: RunReport } | { ok: false; code: number; message: string };

/**
 * `approve` (a person's answer) and `resume` of a waiting run on the local store: the answer is recorded
 * (waits/answer-wait.ts), then this process continues the run if it is answered or due, and drives it as
 * `resume` does; a wait neither answered nor due is reported as it is (exit 4), with how it goes on.
 */
export const continueWaitingRun = async (
  store: RunStore,
  host: LocalHost,
  run: RunItem,
  approve: { deny: boolean; comment: string | undefined } | undefined,
): Promise<Continued> => {
  let wait = run.wait;
  if (approve) {
    try {
      const reply = { kind: 'decision' as const, approved: !approve.deny, by: approver(), ...(approve.comment ? { comment: approve.comment } : {}) };
      wait = (await answerWait(store, run.runId, reply, Date.now())).wait;
    } catch (error) {
      if (error instanceof WaitNotOpenError) return { ok: false, code: EXIT.failed, message: error.message };
      throw error;
    }
  }
  const due = wait !== undefined && (wait.answer !== undefined || (wait.until !== undefined && Date.now() >= wait.until - EARLY_WAKE_TOLERANCE_MS));
  if (!wait || !due) {
    const report = await loadRunReport(store, run.runId);
    if (!report) return { ok: false, code: EXIT.usage, message: `no run '${run.runId}'` };
    return { ok: true, report };
  }
  return { ok: true, report: await holdShortWait(host, await host.wake(run.runId, wait.id)) };
};
