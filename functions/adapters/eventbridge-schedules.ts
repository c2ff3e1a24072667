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
import { InvalidInputError, StoreError } from '../core/errors.ts';
import type { Workflow } from '../core/ir.ts';
import type { IdempotencyRecord, Schedule, WorkflowSummary, WorkflowVersion } from '../core/registry-model.ts';
import type { IdempotencyClaim, RegistryStore } from '../core/registry-store.ts';
import { SCHEDULER_TIME_PLACEHOLDER } from '../core/scheduled-start-event.ts';

export interface SchedulerTarget {
  client: SchedulerClient;
  /** The schedule group the API owns (its role may touch no other). */
  groupName: string;
  /** The scheduled-start Lambda every schedule invokes. */
  targetArn: string;
  /** The role schedules run as: it may invoke that Lambda and nothing else. */
  roleArn: string;
}

/** What a schedule sends (a `ScheduledStartEvent` once Scheduler fills in `scheduledTime` at each fire). */
export const scheduleInput = (schedule: Schedule): string =>
  JSON.stringify({ workflowName: schedule.workflowName, params: schedule.params, scheduledTime: SCHEDULER_TIME_PLACEHOLDER });

/**
 * The registry, with each workflow's schedule mirrored as an EventBridge Scheduler schedule (named after
 * the workflow, in the API's group) that starts runs of the registered workflow. Scheduler is written
 * first: it validates the expression and time zone, and a rejected schedule leaves the registry as it
 * was. A failure after that is repaired by repeating the request (create falls back to update, delete
 * ignores an absent schedule).
 */
export class SchedulerRegistryStore implements RegistryStore {
  constructor(
    private readonly inner: RegistryStore,
    private readonly scheduler: SchedulerTarget,
  ) {}

  async putSchedule(schedule: Schedule): Promise<void> {
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
      },
    };
    try {
      await this.send(() => this.scheduler.client.send(new CreateScheduleCommand(request)), schedule.workflowName);
    } catch (error) {
      if (!(error instanceof ConflictException)) throw error;
      await this.send(() => this.scheduler.client.send(new UpdateScheduleCommand(request)), schedule.workflowName);
    }
    await this.inner.putSchedule(schedule);
  }

  async deleteSchedule(workflowName: string): Promise<boolean> {
    const existed = await this.inner.deleteSchedule(workflowName);
    return (await this.deleteFromScheduler(workflowName)) || existed;
  }

  async deleteWorkflow(name: string): Promise<boolean> {
    const existed = await this.inner.deleteWorkflow(name);
    await this.deleteFromScheduler(name);
    return existed;
  }

  putWorkflow(name: string, workflow: Workflow, now: number): Promise<WorkflowVersion> {
    return this.inner.putWorkflow(name, workflow, now);
  }

  getWorkflow(name: string, version?: number): Promise<WorkflowVersion | undefined> {
    return this.inner.getWorkflow(name, version);
  }

  listWorkflows(): Promise<WorkflowSummary[]> {
    return this.inner.listWorkflows();
  }

  getSchedule(workflowName: string): Promise<Schedule | undefined> {
    return this.inner.getSchedule(workflowName);
  }

  listSchedules(): Promise<Schedule[]> {
    return this.inner.listSchedules();
  }

  claimIdempotencyKey(record: IdempotencyRecord, now: number): Promise<IdempotencyClaim> {
    return this.inner.claimIdempotencyKey(record, now);
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
      throw new StoreError(`EventBridge Scheduler failed for the schedule of ${workflowName}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
}
