import { utf8Length } from '../../core/index.ts';

/**
 * The Step Functions limits the local host enforces the way AWS does, so that a run which would die
 * on AWS dies locally, in the same state, with the same error:
 * - 256 KiB (UTF-8) per state input or output: `States.DataLimitExceeded`, a terminal error no Catch
 *   handles (States.ALL does not match it), so the execution fails there;
 * - an Express execution lives at most 5 minutes: `States.Timeout`, the execution times out;
 * - a Standard execution's history holds at most 25,000 events: the execution fails.
 */
export const AWS_LIMITS = {
  payloadBytes: 256 * 1024,
  expressMs: 5 * 60 * 1000,
  historyEvents: 25_000,
} as const;

export type AwsLimits = { -readonly [K in keyof typeof AWS_LIMITS]: number };

/** Why an execution died: the error Step Functions reports for it, and where. */
export interface ExecutionDeath {
  error: 'States.DataLimitExceeded' | 'States.Timeout' | 'States.Runtime';
  cause: string;
  state: string;
}

/**
 * History events a Standard execution records (Step Functions' own counts): a Lambda Task state
 * entered, scheduled, started, succeeded and exited; a Choice entered and exited; the execution's
 * start and end. A retried or failed attempt records scheduled, started and failed again.
 */
export const HISTORY_EVENTS = { task: 5, taskRetry: 3, choice: 2, execution: 2, endState: 2 } as const;

/** One execution's clock, history and payload checks. */
export class ExecutionGuard {
  private events = HISTORY_EVENTS.execution;
  death: ExecutionDeath | undefined;

  constructor(
    private readonly limits: AwsLimits,
    private readonly mode: 'express' | 'standard',
    private readonly startedAt: number,
    private readonly now: () => number,
  ) {}

  /** The execution input, checked before the first state runs. */
  checkInput(input: unknown): ExecutionDeath | undefined {
    return this.checkSize('execution input', input);
  }

  /** After a Task's handler returned: the clock, the history, the state's output as Step Functions would build it. */
  afterTask(state: string, output: unknown, extraEvents = 0): ExecutionDeath | undefined {
    if (this.death) return this.death;
    const elapsed = this.now() - this.startedAt;
    if (this.mode === 'express' && elapsed > this.limits.expressMs) {
      return this.die({
        error: 'States.Timeout',
        cause: `the Express execution ran ${Math.round(elapsed / 1000)} s, more than its ${this.limits.expressMs / 1000} s limit`,
        state,
      });
    }
    this.events += HISTORY_EVENTS.task + extraEvents;
    if (this.mode === 'standard' && this.events > this.limits.historyEvents) {
      return this.die({ error: 'States.Runtime', cause: `the execution history exceeded ${this.limits.historyEvents} events`, state });
    }
    return this.checkSize(`the output of state ${state}`, output, state);
  }

  /** A Choice state passed (Route). */
  choice(): void {
    this.events += HISTORY_EVENTS.choice;
  }

  private checkSize(what: string, value: unknown, state = 'execution input'): ExecutionDeath | undefined {
    const bytes = utf8Length(JSON.stringify(value) ?? '');
    if (bytes <= this.limits.payloadBytes) return undefined;
    return this.die({
      error: 'States.DataLimitExceeded',
      cause: `${what} is ${bytes} bytes, over the ${this.limits.payloadBytes}-byte (256 KiB) limit of a state payload`,
      state,
    });
  }

  private die(death: ExecutionDeath): ExecutionDeath {
    this.death = death;
    return death;
  }
}

/** The output Step Functions builds from a Task's input and result with the state's ResultPath ($.x, null, or none). */
export const stateOutput = (input: unknown, result: unknown, resultPath: string | null | undefined): unknown => {
  if (resultPath === null) return input;
  if (resultPath === undefined || resultPath === '$') return result;
  const key = resultPath.replace(/^\$\./, '');
  return { ...(input as Record<string, unknown>), [key]: result };
};
