import { commitAdvance } from '../advance-commit.ts';
import type { EngineDeps } from '../engine-deps.ts';
import { StaleRunError } from '../errors.ts';
import { cryptoIds } from '../ids.ts';
import type { Owner, RunEvent, RunItem } from '../run-model.ts';
import type { AdvanceOutcome, WakeInput } from '../state-io.ts';
import { resumeRunTrace } from '../trace-context.ts';
import type { WaitAnswer } from './wait-model.ts';

/**
 * How early a wake-up may come and still count as due: a scheduler's clock and ours differ by a little, and
 * a wake-up refused for being a moment early would leave the run waiting with no wake-up left.
 */
export const EARLY_WAKE_TOLERANCE_MS = 2_000;

type Claimed = { kind: 'claimed'; run: RunItem } | { kind: 'idle'; outcome: AdvanceOutcome };

const idle = (input: WakeInput, reason: string): Claimed => ({ kind: 'idle', outcome: { kind: 'idle', runId: input.runId, owner: input.owner, reason } });

/**
 * The first step of an execution started to continue a waiting run (DESIGN 7b): it takes the run over
 * with a write conditional on the owner that paused it and on the run's event count, so of two wake-ups,
 * or a wake-up and an answer's continuation, that race, exactly one goes on; the others end idle. A wait
 * that is due and unanswered is answered here (`due`, or `timeout` for an event). A wake-up of a run that
 * was cancelled, finished, or waits for something else now does nothing.
 */
export const claimWake = async (input: WakeInput, deps: EngineDeps): Promise<Claimed> => {
  const run = await deps.store.getRun(input.runId);
  if (!run) return idle(input, `run ${input.runId} does not exist`);
  // A retried first step of this same execution, which claimed the run already: it goes on, as a retried start does.
  if (run.status === 'running' && run.owner?.id === input.owner) return { kind: 'claimed', run };
  const wait = run.wait;
  if (run.status !== 'waiting' || wait === undefined) return idle(input, `run ${input.runId} is ${run.status}, not waiting`);
  if (wait.id !== input.waitId) return idle(input, `run ${input.runId} waits for something else now (wait ${wait.id}, not ${input.waitId})`);
  const now = deps.now();
  let answer: WaitAnswer | undefined = wait.answer;
  if (!answer) {
    if (wait.until === undefined || now < wait.until - EARLY_WAKE_TOLERANCE_MS)
      return idle(input, `run ${input.runId}'s wait ${wait.id} is neither answered nor due`);
    answer = { outcome: wait.kind === 'event' ? 'timeout' : 'due', at: now };
  }
  const previous = run.owner?.id;
  const condition = { ...(previous === undefined ? { seq: run.seq } : { ownerId: previous }), eventSeq: run.eventSeq };
  const owner: Owner = input.holder ?? { id: input.owner, since: now };
  const event = {
    runId: run.runId,
    key: String(run.eventSeq).padStart(8, '0'),
    at: now,
    type: 'run_woken',
    ...(wait.nodeId ? { nodeId: wait.nodeId } : {}),
    message: `continuing after ${wait.kind} wait: ${answer.outcome}`,
    data: { kind: wait.kind, waitId: wait.id, outcome: answer.outcome },
  } as RunEvent;
  run.eventSeq += 1;
  // A new stretch of the run's trace, when it has one: the wait ended the one before (run-observations.ts).
  const trace = run.trace
    ? resumeRunTrace(run.trace, { until: run.updatedAt, open: false }, { traced: false, now, ...(deps.ids ? { ids: deps.ids } : {}) })
    : undefined;
  if (trace) run.trace = trace;
  run.wait = { ...wait, answer };
  run.status = 'running';
  run.owner = { ...owner, id: input.owner };
  run.updatedAt = now;
  run.rev = (deps.ids ?? cryptoIds).hex(6);
  try {
    await commitAdvance(deps.store, { events: [event], records: [], run, condition });
  } catch (error) {
    if (!(error instanceof StaleRunError)) throw error;
    return idle(input, `another execution took run ${input.runId} first`);
  }
  deps.cache.rememberRun(run);
  return { kind: 'claimed', run };
};
