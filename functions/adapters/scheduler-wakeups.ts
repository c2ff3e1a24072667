import { createHash } from 'node:crypto';
import { ConflictException, CreateScheduleCommand, type SchedulerClient } from '@aws-sdk/client-scheduler';
import type { WakeRequest, Wakeups } from '../core/index.ts';
import { StoreUnavailableError } from '../core/index.ts';

/** Where the waits' schedules live and what they invoke (the stack's `RunWaits`). */
export interface WakeTarget {
  /** The schedule group of wake-ups (the engine may create schedules in it and nowhere else). */
  groupName: string;
  /** The wake Lambda: it starts the execution that continues the run. */
  targetArn: string;
  /** The role the schedules run as: it may invoke the wake Lambda and nothing else. */
  roleArn: string;
  /** Where a wake-up that could not be delivered is kept. */
  deadLetterArn?: string;
}

/** What a wake-up schedule sends the wake Lambda. */
export const wakeInput = (request: WakeRequest): string => JSON.stringify({ runId: request.runId, waitId: request.waitId, mode: request.mode });

/**
 * A schedule name (at most 64 characters) per wait, and per grant of a slot to it: creating it twice is a
 * conflict, not a second wake-up, and a grant's wake-up is not taken for the deadline's that exists already.
 */
export const wakeScheduleName = (request: Pick<WakeRequest, 'runId' | 'waitId' | 'reason'>): string =>
  `wake-${createHash('sha256')
    .update(`${request.runId}/${request.waitId}${request.reason ? `/${request.reason}` : ''}`)
    .digest('hex')
    .slice(0, 40)}`;

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC, rounded up to the second: never before the deadline. */
export const atExpression = (at: number): string => `at(${new Date(Math.ceil(at / 1000) * 1000).toISOString().slice(0, 19)})`;

/**
 * A waiting run's wake-up as a one-time EventBridge Scheduler schedule (`at()`), which deletes itself once it
 * has fired: nothing waits in Step Functions or Lambda meanwhile, whatever the wait's length. Scheduler
 * retries a failed delivery for up to a day and then keeps the event in the dead-letter queue. The Advance
 * Lambda imports this module at its first wait, so its cold start does not load the Scheduler client.
 */
export class SchedulerWakeups implements Wakeups {
  constructor(
    private readonly target: WakeTarget,
    private readonly client: SchedulerClient,
  ) {}

  async schedule(request: WakeRequest): Promise<void> {
    const command = new CreateScheduleCommand({
      Name: wakeScheduleName(request),
      GroupName: this.target.groupName,
      ScheduleExpression: atExpression(request.at),
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Description: `flowmend: wakes run ${request.runId}`,
      Target: {
        Arn: this.target.targetArn,
        RoleArn: this.target.roleArn,
        Input: wakeInput(request),
        // A wake-up of a wait that is over does nothing, so a retried delivery is harmless.
        RetryPolicy: { MaximumRetryAttempts: 185, MaximumEventAgeInSeconds: 86_400 },
        ...(this.target.deadLetterArn === undefined ? {} : { DeadLetterConfig: { Arn: this.target.deadLetterArn } }),
      },
    });
    try {
      await this.client.send(command);
    } catch (error) {
      // A retried Advance scheduled this wait already.
      if (error instanceof ConflictException) return;
      throw new StoreUnavailableError(`could not schedule the wake-up of run ${request.runId}: ${(error as Error).name}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
}
