import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';
import { parsePflowMarkdown } from '../../functions/adapters/pflow-markdown/parse-pflow-markdown.ts';
import { formatIssues, parseWorkflow, SCHEDULE_EXPRESSION, SCHEDULER_TIME_PLACEHOLDER } from '../../functions/core/index.ts';
import * as z from '../../functions/core/zod.ts';
import type { RunSchedules } from './schedules.ts';

/** EventBridge Scheduler and EventBridge rules both cap a target's input at 8,192 characters. */
export const MAX_TARGET_INPUT_CHARS = 8_192;

const ScheduledWorkflowPropsSchema = z.strictObject({
  /** The run's workflow name (in `flowmend runs`, and the idempotency key). */
  workflowName: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, '1-64 letters, digits, _, . or -, starting with a letter or digit')),
  /**
   * The workflow itself (kept in the template): its JSON, or the text of a pflow `.pflow.md` file (compiled
   * at synth); omit it to run the workflow registered under `workflowName`.
   */
  workflow: z.optional(z.unknown()),
  /** `cron(...)`, `rate(...)` or `at(...)`, as EventBridge Scheduler reads them. */
  schedule: z.string().check(z.regex(SCHEDULE_EXPRESSION, 'cron(...), rate(N minutes|hours|days) or at(yyyy-mm-ddThh:mm:ss)')),
  /** IANA time zone the expression is read in. */
  timezone: z._default(z.string().check(z.minLength(1)), 'UTC'),
  params: z._default(z.record(z.string(), z.unknown()), {}),
  enabled: z._default(z.boolean(), true),
  description: z.optional(z.string().check(z.maxLength(512))),
});
export type ScheduledWorkflowProps = z.input<typeof ScheduledWorkflowPropsSchema> & { schedules: RunSchedules };

/**
 * A workflow and its schedule as code: each fire starts one run through the stack's scheduled-start
 * Lambda, keyed by the fire time, so a re-delivered event starts no second run. An inline workflow is
 * checked at synth, so a broken workflow fails `cdk synth`, not the first night.
 */
export class ScheduledWorkflow extends Construct {
  /** Set in scheduler mode. */
  readonly schedule: scheduler.CfnSchedule | undefined;
  /** Set in rules mode. */
  readonly rule: events.Rule | undefined;

  constructor(scope: Construct, id: string, props: ScheduledWorkflowProps) {
    super(scope, id);
    const { schedules, ...rest } = props;
    const parsed = ScheduledWorkflowPropsSchema.safeParse(rest);
    if (!parsed.success) {
      throw new Error(`ScheduledWorkflow ${id}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'props'}: ${i.message}`).join('; ')}`);
    }
    const spec = parsed.data;
    if (typeof spec.workflow === 'string') {
      const markdown = parsePflowMarkdown(spec.workflow, `${spec.workflowName}.pflow.md`);
      if (!markdown.ok) throw new Error(`ScheduledWorkflow ${id}: the .pflow.md workflow does not parse:\n${formatIssues(markdown.issues)}`);
      spec.workflow = markdown.raw;
    }
    if (spec.workflow !== undefined) {
      const workflow = parseWorkflow(spec.workflow);
      if (!workflow.ok) throw new Error(`ScheduledWorkflow ${id}: the workflow does not parse:\n${formatIssues(workflow.issues)}`);
    }
    const payload = (scheduledTime: string) =>
      JSON.stringify({
        workflowName: spec.workflowName,
        ...(spec.workflow === undefined ? {} : { workflow: spec.workflow }),
        params: spec.params,
        scheduledTime,
      });
    const input = payload(schedules.mode === 'scheduler' ? SCHEDULER_TIME_PLACEHOLDER : '<time>');
    if (input.length > MAX_TARGET_INPUT_CHARS) {
      throw new Error(
        `ScheduledWorkflow ${id}: the schedule's input is ${input.length} characters, over EventBridge's ${MAX_TARGET_INPUT_CHARS}; register the workflow through the API and leave out \`workflow\``,
      );
    }

    if (schedules.mode === 'scheduler') {
      this.rule = undefined;
      this.schedule = new scheduler.CfnSchedule(this, 'Schedule', {
        // The stack's group, with the API's: deleting the stack's group deletes them, and the default group holds none of ours.
        groupName: schedules.name,
        scheduleExpression: spec.schedule,
        scheduleExpressionTimezone: spec.timezone,
        flexibleTimeWindow: { mode: 'OFF' },
        state: spec.enabled ? 'ENABLED' : 'DISABLED',
        description: spec.description ?? `flowmend: starts a run of ${spec.workflowName}`,
        target: {
          arn: schedules.target.functionArn,
          roleArn: schedules.role?.roleArn ?? '',
          input,
          // The handler is idempotent per fire time, so Scheduler's retries cannot start a second run.
          retryPolicy: { maximumRetryAttempts: 3, maximumEventAgeInSeconds: 3_600 },
          deadLetterConfig: { arn: schedules.deadLetters.queueArn },
        },
      });
      if (schedules.group !== undefined) this.schedule.addDependency(schedules.group);
      return;
    }

    if (spec.schedule.startsWith('at(') || spec.timezone !== 'UTC') {
      throw new Error(`ScheduledWorkflow ${id}: EventBridge rules (scheduleMode 'rules') take cron(...) or rate(...) in UTC only`);
    }
    this.schedule = undefined;
    this.rule = new events.Rule(this, 'Rule', {
      schedule: events.Schedule.expression(spec.schedule),
      enabled: spec.enabled,
      description: spec.description ?? `flowmend: starts a run of ${spec.workflowName}`,
      targets: [
        new targets.LambdaFunction(schedules.target, {
          event: events.RuleTargetInput.fromText(events.EventField.time),
          retryAttempts: 3,
          deadLetterQueue: schedules.deadLetters,
        }),
      ],
    });
    // RuleTargetInput.fromObject would quote the whole payload; the transformer needs the raw template.
    const cfnRule = this.rule.node.defaultChild as events.CfnRule;
    cfnRule.addPropertyOverride('Targets.0.InputTransformer', { InputPathsMap: { time: '$.time' }, InputTemplate: payload('<time>') });
  }
}
