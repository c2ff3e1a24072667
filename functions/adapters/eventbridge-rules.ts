import { createHash } from 'node:crypto';
import {
  DeleteRuleCommand,
  type EventBridgeClient,
  PutRuleCommand,
  PutTargetsCommand,
  RemoveTargetsCommand,
  ResourceNotFoundException,
} from '@aws-sdk/client-eventbridge';
import type { Schedule } from '../core/index.ts';
import { ConfigurationError, InvalidInputError, StoreUnavailableError } from '../core/index.ts';
import { API_RULE_INFIX } from './eventbridge-rule-names.ts';
import { scheduleInput } from './eventbridge-schedules.ts';

export { API_RULE_INFIX };

export interface RuleTarget {
  client: EventBridgeClient;
  /** The stack's name: its rules are `<prefix>-...`, and those of the API `<prefix>-schedule.<workflow>`. */
  prefix: string;
  /** The scheduled-start Lambda every rule invokes. */
  targetArn: string;
  /** Where EventBridge puts a fire it could not deliver. */
  deadLetterArn?: string;
}

/** EventBridge's limit on a rule name. */
const MAX_RULE_NAME = 64;
/** The one target each rule has. */
const TARGET_ID = 'scheduled-start';

/**
 * Mirrors the registry's schedules as EventBridge rules (the API's `ScheduleSync` in `scheduleMode: 'rules'`,
 * for LocalStack, which stores Scheduler schedules but fires only rules): one rule per workflow on the
 * default bus, invoking the scheduled-start Lambda with the event's `time` as the fire time. Rules read
 * `cron(...)` and `rate(...)` in UTC only, so `at(...)` and other time zones are refused up front.
 * Both calls can be repeated: PutRule and PutTargets overwrite, and removing an absent rule is a no-op.
 */
export class RulesScheduleSync {
  constructor(private readonly rules: RuleTarget) {
    // The name keeps `<prefix>-schedule.` and at least a short hash after it.
    if (rules.prefix.length > MAX_RULE_NAME - API_RULE_INFIX.length - 12) {
      throw new ConfigurationError(
        `The schedule rule prefix ${rules.prefix} is over ${MAX_RULE_NAME - API_RULE_INFIX.length - 12} characters: EventBridge rule names stop at ${MAX_RULE_NAME}`,
      );
    }
  }

  /** `<prefix>-schedule.<workflow>`, or the workflow name's hash in its place when that would pass EventBridge's 64 characters. */
  ruleName(workflowName: string): string {
    const plain = `${this.rules.prefix}${API_RULE_INFIX}${workflowName}`;
    if (plain.length <= MAX_RULE_NAME) return plain;
    return `${this.rules.prefix}${API_RULE_INFIX}${createHash('sha256').update(workflowName).digest('hex').slice(0, 12)}`;
  }

  async upsert(schedule: Schedule): Promise<void> {
    if (schedule.expression.startsWith('at(') || schedule.timezone !== 'UTC') {
      throw new InvalidInputError(
        `The schedule of ${schedule.workflowName} needs EventBridge Scheduler: this stack keeps schedules as EventBridge rules (scheduleMode 'rules'), which take cron(...) or rate(...) in UTC only`,
      );
    }
    const Name = this.ruleName(schedule.workflowName);
    await this.send(
      () =>
        this.rules.client.send(
          new PutRuleCommand({
            Name,
            ScheduleExpression: schedule.expression,
            State: schedule.enabled ? 'ENABLED' : 'DISABLED',
            Description: `flowmend: starts a run of ${schedule.workflowName}`,
          }),
        ),
      schedule.workflowName,
    );
    const put = await this.send(
      () =>
        this.rules.client.send(
          new PutTargetsCommand({
            Rule: Name,
            Targets: [
              {
                Id: TARGET_ID,
                Arn: this.rules.targetArn,
                // The transformer fills the fire time in; scheduled-start is idempotent per fire time.
                InputTransformer: { InputPathsMap: { time: '$.time' }, InputTemplate: scheduleInput(schedule, '<time>') },
                RetryPolicy: { MaximumRetryAttempts: 3, MaximumEventAgeInSeconds: 3_600 },
                ...(this.rules.deadLetterArn === undefined ? {} : { DeadLetterConfig: { Arn: this.rules.deadLetterArn } }),
              },
            ],
          }),
        ),
      schedule.workflowName,
    );
    const failed = put.FailedEntries?.[0];
    if ((put.FailedEntryCount ?? 0) > 0 || failed !== undefined) {
      throw new StoreUnavailableError(
        `EventBridge did not attach the target of the schedule of ${schedule.workflowName}: ${failed?.ErrorCode ?? 'unknown'} ${failed?.ErrorMessage ?? ''}`.trim(),
      );
    }
  }

  async remove(workflowName: string): Promise<void> {
    const Rule = this.ruleName(workflowName);
    // A rule with targets cannot be deleted: targets first. Either step may find nothing there (a repeated remove).
    for (const call of [
      () => this.rules.client.send(new RemoveTargetsCommand({ Rule, Ids: [TARGET_ID] })),
      () => this.rules.client.send(new DeleteRuleCommand({ Name: Rule })),
    ]) {
      try {
        await this.send(call, workflowName);
      } catch (error) {
        if (!(error instanceof ResourceNotFoundException)) throw error;
      }
    }
  }

  /** EventBridge's verdict on a bad expression is the caller's error; anything else is ours. */
  private async send<T>(call: () => Promise<T>, workflowName: string): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (error instanceof ResourceNotFoundException) throw error;
      if (error instanceof Error && error.name === 'ValidationException') {
        throw new InvalidInputError(`EventBridge rejected the schedule of ${workflowName}: ${error.message}`, { cause: error });
      }
      throw new StoreUnavailableError(`EventBridge failed for the schedule of ${workflowName}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
  }
}
