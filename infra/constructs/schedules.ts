import { Arn, ArnFormat, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { API_RULE_INFIX } from '../../functions/adapters/eventbridge-rule-names.ts';
import { acknowledgeNag } from '../nag.ts';

/** EventBridge Scheduler (time zones, `at(...)`, the default), or EventBridge rules (LocalStack fires only these). */
export type ScheduleMode = 'scheduler' | 'rules';

export interface RunSchedulesProps {
  mode: ScheduleMode;
  /** The Lambda every schedule invokes: it starts one run of a workflow per fire time. */
  target: lambda.IFunction;
  /** Schedule group name (scheduler mode): the only schedules the API may create and delete. */
  name: string;
}

/**
 * Where the schedules the API manages live, and who may fire them. In scheduler mode: a schedule
 * group and a role that EventBridge Scheduler assumes, allowed to invoke the scheduled-start Lambda
 * and nothing else. In rules mode: a Lambda permission for EventBridge,
 * restricted to this account's rules named with the prefix (the API's, and those
 * `ScheduledWorkflow` keeps as code).
 */
export class RunSchedules extends Construct {
  readonly mode: ScheduleMode;
  readonly target: lambda.IFunction;
  /** Set in scheduler mode. */
  readonly group: scheduler.CfnScheduleGroup | undefined;
  /** Set in scheduler mode: the role every schedule runs as. */
  readonly role: iam.Role | undefined;
  readonly name: string;
  /** Where a fire that EventBridge or Scheduler could not deliver to the target is kept (14 days). */
  readonly deadLetters: sqs.Queue;
  /** Raised by a scheduled start that failed (the target's errors) or a fire that could not be delivered. */
  readonly alarms: cloudwatch.Alarm[];

  constructor(scope: Construct, id: string, props: RunSchedulesProps) {
    super(scope, id);
    this.mode = props.mode;
    this.target = props.target;
    this.name = props.name;
    const stack = Stack.of(this);
    this.deadLetters = new sqs.Queue(this, 'DeadLetters', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    acknowledgeNag(this.deadLetters, 'AwsSolutions', 'AwsSolutions-SQS3', "this queue is itself the schedules' dead-letter queue");
    acknowledgeNag(this.deadLetters, 'Serverless', 'Serverless-SQSRedrivePolicy', "this queue is itself the schedules' dead-letter queue");
    const alarm = (id: string, description: string, metric: cloudwatch.IMetric) =>
      new cloudwatch.Alarm(this, id, {
        alarmDescription: description,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    this.alarms = [
      alarm('StartErrors', `flowmend: a scheduled start failed (${props.name})`, props.target.metricErrors({ period: Duration.minutes(5) })),
      alarm(
        'Undelivered',
        `flowmend: a schedule fire could not be delivered (${props.name}); it is kept in the schedules' dead-letter queue`,
        this.deadLetters.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: cloudwatch.Stats.MAXIMUM }),
      ),
    ];
    if (props.mode === 'scheduler') {
      this.group = new scheduler.CfnScheduleGroup(this, 'Group', { name: props.name });
      this.role = new iam.Role(this, 'SchedulerRole', {
        description: 'EventBridge Scheduler: may start flowmend runs (invoke the scheduled-start Lambda) and nothing else',
        // The confused-deputy guard AWS recommends: only this account's schedules assume the role.
        assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      });
      this.role.addToPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.target.functionArn] }));
      this.deadLetters.grantSendMessages(this.role);
    } else {
      // EventBridge sends what a rule could not deliver to the queue: rules of this stack only.
      this.deadLetters.addToResourcePolicy(
        new iam.PolicyStatement({
          principals: [new iam.ServicePrincipal('events.amazonaws.com')],
          actions: ['sqs:SendMessage'],
          resources: [this.deadLetters.queueArn],
          conditions: { ArnLike: { 'aws:SourceArn': this.ruleArn('*') } },
        }),
      );
      this.group = undefined;
      this.role = undefined;
      props.target.addPermission('InvokedByScheduleRules', {
        principal: new iam.ServicePrincipal('events.amazonaws.com'),
        sourceArn: this.ruleArn('*'),
        sourceAccount: stack.account,
      });
    }
  }

  /** ARN of a rule (or, with `*`, of every rule) named with this construct's prefix. */
  ruleArn(suffix: string): string {
    return Arn.format(
      { service: 'events', resource: 'rule', resourceName: `${this.name}-${suffix}`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME },
      Stack.of(this),
    );
  }

  /**
   * Lets the API create, update and delete the schedules it mirrors: in scheduler mode those of the group
   * (and pass them the scheduler role); in rules mode the rules it names `<prefix>-schedule.*`, which no
   * rule of the stack's own (the watcher's, ScheduledWorkflow's) can be named, among those the target's
   * permission lets invoke it (a Lambda target needs no role, so no PassRole).
   */
  grantManage(grantee: iam.IGrantable): void {
    if (this.role === undefined) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['events:PutRule', 'events:PutTargets', 'events:RemoveTargets', 'events:DeleteRule', 'events:DescribeRule'],
          resources: [this.ruleArn(`${API_RULE_INFIX.slice(1)}*`)],
        }),
      );
      return;
    }
    const stack = Stack.of(this);
    const schedules = Arn.format(
      { service: 'scheduler', resource: 'schedule', resourceName: `${this.name}/*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME },
      stack,
    );
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['scheduler:CreateSchedule', 'scheduler:UpdateSchedule', 'scheduler:DeleteSchedule', 'scheduler:GetSchedule'],
        resources: [schedules],
      }),
    );
    // CreateSchedule names the role the schedule runs as: the API may pass this role, to Scheduler only.
    grantee.grantPrincipal.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [this.role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
  }

  /** What the API Lambda needs to know to manage schedules here (see `ApiEnvSchema`). */
  get environment(): Record<string, string> {
    return {
      FLOWMEND_SCHEDULE_MODE: this.mode,
      FLOWMEND_SCHEDULE_NAME: this.name,
      FLOWMEND_SCHEDULE_TARGET_ARN: this.target.functionArn,
      FLOWMEND_SCHEDULE_DLQ_ARN: this.deadLetters.queueArn,
      ...(this.role === undefined ? {} : { FLOWMEND_SCHEDULER_ROLE_ARN: this.role.roleArn }),
    };
  }
}
