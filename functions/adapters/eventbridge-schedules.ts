import {
  ConflictException,
  CreateScheduleCommand,
  type CreateScheduleCommandInput,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  type SchedulerClient,
  UpdateScheduleCommand,
  ValidationException,
} from '@aws-sdk/client-scheduler';
import type { Schedule } from '../core/index.ts';
import { InvalidInputError, SCHEDULER_TIME_PLACEHOLDER, StoreUnavailableError } from '../core/index.ts';

export interface SchedulerTarget {
  client: SchedulerClient;
  /** The schedule group the API owns (its role may touch no other). */
  groupName: string;
  /** The scheduled-start Lambda every schedule invokes. */
  targetArn: string;
  /** The role schedules run as: it may invoke that Lambda (and send to the dead-letter queue) and nothing else. */
  roleArn: string;
  /** Where Scheduler puts a fire it could not deliver. */
  deadLetterArn?: string;
}

/**
 * What a schedule sends (a `ScheduledStartEvent` once the service fills in `scheduledTime` at each fire):
 * Scheduler's own placeholder by default, an input transformer's `<time>` for EventBridge rules.
 */
export const scheduleInput = (schedule: Schedule, timePlaceholder: string = SCHEDULER_TIME_PLACEHOLDER): string =>
  JSON.stringify({ workflowName: schedule.workflowName, params: schedule.params, scheduledTime: timePlaceholder });

/**
 * Mirrors the registry's schedules as EventBridge Scheduler schedules (the API's `ScheduleSync` on AWS):
 * one per workflow, named after it, in the API's group, invoking the scheduled-start Lambda with the fire
 * time. Both calls can be repeated: create falls back to update, and removing an absent schedule is a no-op.
 */
export class SchedulerScheduleSync {
  constructor(private readonly scheduler: SchedulerTarget) {}

  async upsert(schedule: Schedule): Promise<void> {
    const request: CreateScheduleCommandInput = {
      Name: schedule.workflowName,
      GroupName: this.scheduler.groupName,
      ScheduleExpression: schedule.expression,
      ScheduleExpressionTimezone: schedule.timezone,
      State: schedule.enabled ? 'ENABLED' : 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Description: `flowmend: starts a run of ${schedule.workflowName}`,
      Target: {
        Arn: this.scheduler.targetArn,
        RoleArn: this.scheduler.roleArn,
        Input: scheduleInput(schedule),
        // scheduled-start is idempotent per fire time, so a retried delivery starts no second run.
        RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3_600 },
        ...(this.scheduler.deadLetterArn === undefined ? {} : { DeadLetterConfig: { Arn: this.scheduler.deadLetterArn } }),
      },
    };
    try {
      await this.send(() => this.scheduler.client.send(new CreateScheduleCommand(request)), schedule.workflowName);
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
      await this.send(() => this.scheduler.client.send(new UpdateScheduleCommand(request)), schedule.workflowName);
    }
  }

  async remove(workflowName: string): Promise<void> {
    await this.deleteFromScheduler(workflowName);
  }

  private async deleteFromScheduler(workflowName: string): Promise<boolean> {
    try {
      await this.send(() => this.scheduler.client.send(new DeleteScheduleCommand({ Name: workflowName, GroupName: this.scheduler.groupName })), workflowName);
      return true;
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return false;
      throw error;
    }
  }

  /** Scheduler's verdict on a bad expression or time zone is the caller's error; anything else is ours. */
  private async send<T>(call: () => Promise<T>, workflowName: string): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ConflictException || error instanceof ResourceNotFoundException) throw error;
      if (error instanceof ValidationException) {
        throw new InvalidInputError(`EventBridge Scheduler rejected the schedule of ${workflowName}: ${error.message}`, { cause: error });
      }
      throw new StoreUnavailableError(
        `EventBridge Scheduler failed for the schedule of ${workflowName}: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
    }
  }
}
