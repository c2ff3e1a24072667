import { Arn, ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledgeNag } from '../nag.ts';

export interface RunWaitsProps {
  /** The stack's name: the wake-up schedule group is `<name>-waits`, the callback secret `<name>/callbacks`. */
  name: string;
  /** The engine: it schedules wake-ups and mints callback tokens. */
  advance: lambda.Function;
  /** The target of every wake-up: it starts the execution that continues a run. */
  wake: lambda.IFunction;
  /** Where a wake-up Scheduler could not deliver is kept. */
  deadLetters: sqs.IQueue;
  /** The API's URL, where callbacks come (stored in the callback secret beside its key). */
  apiUrl: string;
  /**
   * `scheduler`: a one-time schedule wakes each wait at its deadline. `none` (LocalStack, which fires no
   * Scheduler schedule): no wake-up schedules; a due wait goes on when `POST /runs/{id}/resume`
   * (`flowmend resume --api`) asks for it. Callbacks work either way.
   */
  wakeups: 'scheduler' | 'none';
}

/**
 * What waiting runs need on AWS (DESIGN 7b): a schedule group for one-time wake-ups (`at()`, deleted once
 * fired) and the role they run as, which may invoke the wake Lambda and write the dead-letter queue and
 * nothing else; and the callback secret (a random key and the API's URL) from which the engine mints
 * callback tokens. The engine finds the secret by name and the wake Lambda finds the state machines by
 * name, so that neither depends on what depends on it (the machines on the engine, the API on both).
 */
export class RunWaits extends Construct {
  /** The wake-up schedules' group and role (scheduler mode). */
  readonly group: scheduler.CfnScheduleGroup | undefined;
  readonly role: iam.Role | undefined;
  readonly secret: secretsmanager.Secret;

  constructor(scope: Construct, id: string, props: RunWaitsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const secretName = `${props.name}/callbacks`;
    this.secret = new secretsmanager.Secret(this, 'CallbackSecret', {
      secretName,
      description: 'flowmend: the key callback tokens are minted with, and the API URL callbacks reach',
      generateSecretString: {
        secretStringTemplate: stack.toJsonString({ url: props.apiUrl }),
        generateStringKey: 'key',
        passwordLength: 64,
        excludePunctuation: true,
      },
    });
    acknowledgeNag(
      this.secret,
      'AwsSolutions',
      'AwsSolutions-SMG4',
      'rotating the callback key would refuse every callback URL already sent out; replace the secret to retire the links',
    );

    // By name (Secrets Manager appends 6 random characters to a secret's ARN), not by reference: see above.
    const secretArn = Arn.format(
      { service: 'secretsmanager', resource: 'secret', resourceName: `${secretName}-??????`, arnFormat: ArnFormat.COLON_RESOURCE_NAME },
      stack,
    );
    props.advance.addToRolePolicy(new iam.PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [secretArn] }));
    if (props.advance.role) {
      acknowledgeNag(
        props.advance.role,
        'AwsSolutions',
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${secretName}-??????]`,
        'the callback secret is granted by its name (its ARN ends in 6 random characters): GetSecretValue on that one secret',
      );
    }
    props.advance.addEnvironment('FLOWMEND_CALLBACK_SECRET_ID', secretName);
    if (props.wakeups === 'scheduler') {
      const { group, role } = this.scheduleWakeUps(props);
      this.group = group;
      this.role = role;
    } else {
      this.group = undefined;
      this.role = undefined;
    }
  }

  /** The wake-up group and the role its schedules run as; the engine may create schedules there and pass that role. */
  private scheduleWakeUps(props: RunWaitsProps): { group: scheduler.CfnScheduleGroup; role: iam.Role } {
    const stack = Stack.of(this);
    const groupName = `${props.name}-waits`;
    const group = new scheduler.CfnScheduleGroup(this, 'Group', { name: groupName });
    const role = new iam.Role(this, 'SchedulerRole', {
      description: 'EventBridge Scheduler: may wake flowmend runs (invoke the wake Lambda) and nothing else',
      assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com', { conditions: { StringEquals: { 'aws:SourceAccount': stack.account } } }),
    });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: [props.wake.functionArn] }));
    props.deadLetters.grantSendMessages(role);

    const schedules = Arn.format(
      { service: 'scheduler', resource: 'schedule', resourceName: `${groupName}/*`, arnFormat: ArnFormat.SLASH_RESOURCE_NAME },
      stack,
    );
    props.advance.addToRolePolicy(new iam.PolicyStatement({ actions: ['scheduler:CreateSchedule'], resources: [schedules] }));
    props.advance.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['iam:PassRole'],
        resources: [role.roleArn],
        conditions: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } },
      }),
    );
    if (props.advance.role) {
      acknowledgeNag(
        props.advance.role,
        'AwsSolutions',
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${groupName}/*]`,
        "wake-up schedules are named per wait at run time: the grant is CreateSchedule in the stack's wake-up group only",
      );
    }
    for (const [name, value] of Object.entries({
      FLOWMEND_WAKE_GROUP: groupName,
      FLOWMEND_WAKE_TARGET_ARN: props.wake.functionArn,
      FLOWMEND_WAKE_ROLE_ARN: role.roleArn,
      FLOWMEND_WAKE_DLQ_ARN: props.deadLetters.queueArn,
    }))
      props.advance.addEnvironment(name, value);
    return { group, role };
  }
}

/** The ARN of a state machine of the stack, from its name alone (the wake Lambda's way to it, without a reference). */
export const stateMachineArnByName = (scope: Construct, name: string): string =>
  Arn.format({ service: 'states', resource: 'stateMachine', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME }, Stack.of(scope));
