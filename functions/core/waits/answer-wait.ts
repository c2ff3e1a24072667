import { commitAdvance } from '../advance-commit.ts';
import { InvalidInputError, RunNotFoundError, StaleRunError, WaitNotOpenError } from '../errors.ts';
import type { RunEvent, RunItem } from '../run-model.ts';
import type { RunStore } from '../run-store.ts';
import { callbackTokenMatches } from './callback-token.ts';
import { ANSWERS, describeWait, type Wait, type WaitAnswer } from './wait-model.ts';

/** The largest event payload a callback may deliver (JSON): it lands in the run item, then in the node's record. */
export const MAX_EVENT_PAYLOAD_BYTES = 64 * 1024;
/** The longest comment kept with an approval or a denial. */
export const MAX_COMMENT_CHARS = 2_000;

/** An answer to a waiting run: a callback's event (its token is the credential), or a person's decision. */
export type WaitReply =
  | { kind: 'event'; token: string; payload: unknown }
  | { kind: 'decision'; approved: boolean; comment?: string; by?: string; waitId?: string }
  /** A concurrency slot handed to the run's wait `waitId` by the holder that gave it back (flow/flow-step.ts). */
  | { kind: 'grant'; waitId: string };

const ANSWER_ATTEMPTS = 3;

/** The one message for every refused callback: a caller without the token learns nothing about the run. */
const CALLBACK_REFUSED = 'no open wait of this run takes this callback: its token was used already, is not this run’s, or the run does not wait for it now';

const refuse = (message: string, run: RunItem): never => {
  throw new WaitNotOpenError(message, { details: { runId: run.runId, status: run.status } });
};

/** The answer `reply` gives to the run's open wait; throws WaitNotOpenError when it waits for no such answer. */
const answerFor = (run: RunItem, reply: WaitReply, now: number): { wait: Wait; answer: WaitAnswer; repeated?: true } => {
  const wait = run.wait;
  if (reply.kind === 'event') {
    if (run.status !== 'waiting' || wait?.kind !== 'event' || wait.answer || !callbackTokenMatches(reply.token, wait.tokenHash)) refuse(CALLBACK_REFUSED, run);
    return { wait: wait as Wait, answer: { outcome: 'event', at: now, payload: reply.payload } };
  }
  if (reply.kind === 'grant') {
    if (run.status !== 'waiting' || wait?.kind !== 'slot' || wait.id !== reply.waitId) return refuse(`run ${run.runId} no longer waits for that slot`, run);
    return wait.answer ? { wait, answer: wait.answer, repeated: true } : { wait, answer: { outcome: 'granted', at: now } };
  }
  if (run.status !== 'waiting' || !wait) return refuse(`run ${run.runId} is ${run.status}: it waits for no approval`, run);
  if (reply.waitId !== undefined && reply.waitId !== wait.id) return refuse(`run ${run.runId} no longer waits for that (${describeWait(wait)})`, run);
  const outcome = reply.approved ? 'approved' : 'denied';
  if (!ANSWERS[wait.kind].includes(outcome)) return refuse(`run ${run.runId} does not wait for a person: ${describeWait(wait)}`, run);
  if (wait.answer && wait.answer.outcome !== outcome)
    return refuse(`run ${run.runId} was already answered: ${wait.answer.outcome} at ${new Date(wait.answer.at).toISOString()}`, run);
  // The same decision again (a retried request): the answer stands, and the caller may continue the run again.
  if (wait.answer) return { wait, answer: wait.answer, repeated: true };
  const comment = reply.comment?.slice(0, MAX_COMMENT_CHARS);
  return { wait, answer: { outcome, at: now, ...(comment ? { comment } : {}), ...(reply.by ? { by: reply.by } : {}) } };
};

/**
 * Records the one answer of a run's open wait (DESIGN 7b), with a write conditional on the run's owner and
 * its event count: of an event, a timeout, a decision and a cancel that race, exactly one is written; the
 * others are refused (the same decision again is not: it changes nothing, and its caller continues the
 * run again). The run stays `waiting` until an execution claims it (claim-wake.ts): the caller launches
 * one, and so does `serve` for an answered wait that no execution took.
 */
export const answerWait = async (store: RunStore, runId: string, reply: WaitReply, now: number): Promise<{ run: RunItem; wait: Wait }> => {
  if (reply.kind === 'event') {
    const bytes = Buffer.byteLength(JSON.stringify(reply.payload ?? null));
    if (bytes > MAX_EVENT_PAYLOAD_BYTES)
      throw new InvalidInputError(`the event payload takes ${bytes} bytes; the limit is ${MAX_EVENT_PAYLOAD_BYTES}`, {
        details: { limit: MAX_EVENT_PAYLOAD_BYTES },
      });
  }
  for (let attempt = 0; ; attempt += 1) {
    const run = await store.getRun(runId);
    if (!run) throw new RunNotFoundError(`no run '${runId}' (see GET /runs or \`flowmend runs\`)`);
    const { wait, answer, repeated } = answerFor(run, reply, now);
    if (repeated) return { run, wait };
    const condition = { ...(run.owner ? { ownerId: run.owner.id } : { seq: run.seq }), eventSeq: run.eventSeq };
    const event = {
      runId,
      key: String(run.eventSeq).padStart(8, '0'),
      at: now,
      type: 'wait_answered',
      ...(wait.nodeId ? { nodeId: wait.nodeId } : {}),
      message: `${answer.outcome}${answer.by ? ` by ${answer.by}` : ''}${answer.comment ? `: ${answer.comment}` : ''}`,
      data: { kind: wait.kind, waitId: wait.id, outcome: answer.outcome },
    } as RunEvent;
    run.eventSeq += 1;
    run.wait = { ...wait, answer };
    run.updatedAt = now;
    try {
      await commitAdvance(store, { events: [event], records: [], run, condition });
      return { run, wait: run.wait };
    } catch (error) {
      // Another writer moved the run on: read it again, and the checks above say whether this answer still applies.
      if (!(error instanceof StaleRunError) || attempt + 1 >= ANSWER_ATTEMPTS) throw error;
    }
  }
};
