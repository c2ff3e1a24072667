import { Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { Construct } from 'constructs';

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

  constructor(scope: Construct, id: string, props: RunSchedulesProps) {
    super(scope, id);
    this.mode = props.mode;
    this.target = props.target;
    this.name = props.name;
    const stack = Stack.of(this);
    if (props.mode === 'scheduler') {
      this.group = new scheduler.CfnScheduleGroup(this, 'Group', { name: props.name });
      this.role = new iam.Role(this, 'SchedulerRole', {
        description: 'EventBridge Scheduler: may start flowmend runs (invoke the scheduled-start Lambda) and nothing else',
        // The confused-deputy guard AWS recommends: only this account's schedules assume the role.
        assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
      });
      this.role.addToPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.target.functionArn] }));
    } else {
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
   * (and pass them the scheduler role); in rules mode the rules named with this prefix, the same rules the
   * target's permission lets invoke it (a Lambda target needs no role, so no PassRole).
   */
  grantManage(grantee: iam.IGrantable): void {
    if (this.role === undefined) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['events:PutRule', 'events:PutTargets', 'events:RemoveTargets', 'events:DeleteRule', 'events:DescribeRule'],
          resources: [this.ruleArn('*')],
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
      ...(this.role === undefined ? {} : { FLOWMEND_SCHEDULER_ROLE_ARN: this.role.roleArn }),
    };
  }
}
