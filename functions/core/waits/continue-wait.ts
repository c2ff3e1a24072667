import type { Advance } from '../advance.ts';
import { InvalidInputError } from '../errors.ts';
import type { RunnerResult } from '../node-type.ts';
import type { RunError } from '../run-model.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import type { Wait, WaitAnswer } from './wait-model.ts';

/** The engine's `recordNode` (engine.ts), passed in: it classifies a node's outcome, records it and routes on. */
export type RecordNode = (step: Advance, input: { seq: number; result?: RunnerResult; fatal?: RunError }) => Promise<AdvanceOutcome>;

const iso = (ms: number): string => new Date(ms).toISOString();

/** `by alice: too risky`, or nothing. */
const who = (answer: WaitAnswer): string => `${answer.by ? ` by ${answer.by}` : ''}${answer.comment ? `: ${answer.comment}` : ''}`;

/** The wait node in flight is the one the wait belongs to (the pause kept it as `run.current`). */
const waitingNode = (step: Advance, wait: Wait) => {
  const current = step.run.current;
  if (!current || current.nodeId !== wait.nodeId) {
    throw new InvalidInputError(`run ${step.run.runId} waited on '${wait.nodeId}' but has ${current ? `'${current.nodeId}'` : 'no node'} in flight`);
  }
  return current;
};

/** The gated node's denial: a non-repairable `DENIED` on its `error` action (an `error` edge routes on, else the run fails). */
export const deniedError = (nodeId: string, answer: WaitAnswer): RunError => ({
  node_id: nodeId,
  category: 'non_repairable',
  code: 'DENIED',
  message: `approval of '${nodeId}' was denied${who(answer)}`,
  fixable: false,
});

/**
 * The first thing an execution does with a run it claimed after a wait (claim-wake.ts): a wait node
 * completes with its outputs; a wait-for-event node completes with the event's payload, or fails on a
 * timeout (non-repairable, on its `error` action); an approved gate lets its node run, a denied one fails
 * it (DENIED); a held repair is applied or rejected (`onRepair`, repair/held-repair.ts); a wait of flow
 * control (a slot, a rate limit's start, a debounced start) goes on where it paused (`onFlow`, flow/flow-step.ts).
 */
export const continueWait = async (
  step: Advance,
  recordNode: RecordNode,
  onRepair: (step: Advance, wait: Extract<Wait, { kind: 'repair-approval' }>, answer: WaitAnswer) => Promise<AdvanceOutcome>,
  onFlow: (step: Advance, wait: Extract<Wait, { kind: 'slot' | 'rate' | 'debounce' }>) => Promise<AdvanceOutcome>,
): Promise<AdvanceOutcome> => {
  const { run } = step;
  const wait = run.wait;
  const answer = wait?.answer;
  if (!wait || !answer) throw new InvalidInputError(`run ${run.runId} has no answered wait to continue`);
  delete run.wait;
  switch (wait.kind) {
    case 'time': {
      const node = waitingNode(step, wait);
      const durationMs = Math.max(0, answer.at - node.startedAt);
      const outputs = { waited_s: Math.round(durationMs / 1000), until: iso(wait.until), woke_at: iso(answer.at) };
      return recordNode(step, { seq: node.seq, result: { kind: 'ok', outputs, action: 'default', durationMs } });
    }
    case 'event': {
      const node = waitingNode(step, wait);
      const durationMs = Math.max(0, answer.at - node.startedAt);
      if (answer.outcome === 'event') {
        const outputs = { payload: answer.payload ?? null, received_at: iso(answer.at) };
        return recordNode(step, { seq: node.seq, result: { kind: 'ok', outputs, action: 'default', durationMs } });
      }
      const waited = wait.until === undefined ? '' : ` within ${Math.round((wait.until - wait.since) / 1000)} s`;
      return recordNode(step, {
        seq: node.seq,
        fatal: { node_id: wait.nodeId, category: 'non_repairable', code: 'WAIT_TIMEOUT', message: `no event came${waited}`, fixable: false },
      });
    }
    case 'approval': {
      const iteration = wait.iteration === undefined ? {} : { iteration: wait.iteration };
      if (answer.outcome === 'approved') return step.prepare(wait.nodeId, { approved: true, ...iteration });
      return step.prepare(wait.nodeId, { approved: true, ...iteration, settle: (seq) => recordNode(step, { seq, fatal: deniedError(wait.nodeId, answer) }) });
    }
    case 'repair-approval':
      return onRepair(step, wait, answer);
    case 'slot':
    case 'rate':
    case 'debounce':
      return onFlow(step, wait);
  }
};
