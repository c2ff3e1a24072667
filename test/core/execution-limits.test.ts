import { describe, expect, it } from 'vitest';
import { buildDefinition, runnerStateName, STATE } from '../../functions/core/definition.ts';
import {
  DEFAULT_EXECUTION_LIMITS,
  EXPRESS_MAX_NODE_TIMEOUT_S,
  mustContinueBefore,
  REPAIR_MAX_S,
  repairWorstCaseS,
  runnerWorstCaseS,
  STANDARD_HISTORY_EVENTS,
} from '../../functions/core/execution-limits.ts';
import { LAMBDA_THROTTLED } from '../../functions/core/retry-policy.ts';

const definition = buildDefinition({ advance: 'a', repair: 'r', runners: { shell: 's' }, continueRun: 'c', interrupted: 'i' });
type Retrier = { ErrorEquals: string[]; MaxAttempts: number; IntervalSeconds: number; BackoffRate: number; MaxDelaySeconds?: number };
const retriers = (state: string) => definition.States[state]?.Retry as Retrier[];
/** History events of a Task whose every Retry is used: 5, and 3 for each failed try. */
const worstTaskEvents = (state: string) => 5 + 3 * retriers(state).reduce((n, r) => n + r.MaxAttempts, 0);

describe("continue-before counts retries (worst case by the definition's Retry policies)", () => {
  it('a Standard execution of maxAdvances steps, every retry used, stays under the 25,000-event history', () => {
    const perStep = worstTaskEvents(STATE.advance) + 2 + worstTaskEvents(runnerStateName('shell'));
    expect(perStep).toBeGreaterThan(13);
    expect(DEFAULT_EXECUTION_LIMITS.maxAdvances * perStep).toBeLessThan(STANDARD_HISTORY_EVENTS);
  });

  it("a node's worst case is every try to its timeout plus the waits of the runner Task's retriers (throttling's aside: it interrupts the run)", () => {
    const waits = retriers(runnerStateName('shell'))
      .filter((r) => !r.ErrorEquals.includes(LAMBDA_THROTTLED))
      .reduce(
        (s, r) =>
          s +
          Array.from({ length: r.MaxAttempts }, (_, i) =>
            Math.min(r.IntervalSeconds * r.BackoffRate ** i, r.MaxDelaySeconds ?? Number.POSITIVE_INFINITY),
          ).reduce((a, b) => a + b, 0),
        0,
      );
    const tries = 1 + (retriers(runnerStateName('shell'))[0]?.MaxAttempts ?? 0);
    expect(runnerWorstCaseS(60)).toBe(tries * 60 + waits);
    // The longest Express node fits, retries included, in a fresh execution; one second more does not.
    expect(runnerWorstCaseS(EXPRESS_MAX_NODE_TIMEOUT_S) * 1000).toBeLessThanOrEqual(DEFAULT_EXECUTION_LIMITS.maxMs);
    expect(runnerWorstCaseS(EXPRESS_MAX_NODE_TIMEOUT_S + 1) * 1000).toBeGreaterThan(DEFAULT_EXECUTION_LIMITS.maxMs);
  });

  it('continues before a node whose timeout fits in the time left but whose retries do not', () => {
    const exec = { startedAt: 0, advances: 3 };
    const now = 100_000;
    // 100 s used: a 60 s try fits in 280 s, four of them do not.
    expect(now + 60_000).toBeLessThan(DEFAULT_EXECUTION_LIMITS.maxMs);
    expect(mustContinueBefore(DEFAULT_EXECUTION_LIMITS, exec, 'express', now, runnerWorstCaseS(60))).toBe(true);
    expect(mustContinueBefore(DEFAULT_EXECUTION_LIMITS, exec, 'express', now, runnerWorstCaseS(30))).toBe(false);
    expect(mustContinueBefore(DEFAULT_EXECUTION_LIMITS, exec, 'standard', now, runnerWorstCaseS(60))).toBe(false);
    expect(mustContinueBefore(DEFAULT_EXECUTION_LIMITS, { startedAt: 0, advances: DEFAULT_EXECUTION_LIMITS.maxAdvances }, 'standard', now, 1)).toBe(true);
  });

  it('a repair fits a fresh Express execution: its Lambda timeout with the service retries, and its Task timeout within the 5 minutes', () => {
    expect(repairWorstCaseS(REPAIR_MAX_S) * 1000).toBeLessThanOrEqual(DEFAULT_EXECUTION_LIMITS.maxMs);
    expect(definition.States[STATE.repair]?.TimeoutSeconds).toBeLessThanOrEqual(300);
  });
});
