import { Arn, ArnFormat, Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as eventsTargets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as logsDestinations from 'aws-cdk-lib/aws-logs-destinations';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { buildDefinition, type TaskTimeouts } from '../../functions/core/index.ts';
import { EXECUTION_END_LOG_TYPES } from '../../functions/hosts/lambda/mark-interrupted.ts';
import { acknowledgeNag, XRAY_REASON } from '../nag.ts';

export interface RunStateMachineProps {
  type: sfn.StateMachineType;
  /** Physical name; known before deploy so that the machine may start itself (continue-as-new) without a cycle. */
  stateMachineName: string;
  advance: lambda.IFunction;
  repair: lambda.IFunction;
  /** Marks a run interrupted: the Continue state's Catch, and the watcher of executions that died. */
  interrupted: lambda.IFunction;
  /** Where watcher events that could not be delivered go. */
  deadLetters: sqs.IQueue;
  /** Task timeouts from the Lambdas' own. */
  taskTimeoutsS: Partial<TaskTimeouts>;
  /** Runner Lambda per node type. */
  runners: Readonly<Record<string, lambda.IFunction>>;
  logLevel: sfn.LogLevel;
  logRetentionDays: number;
  timeout?: Duration;
}

const substitutionName = (nodeType: string): string => `Run${nodeType.replace(/[^A-Za-z0-9]/g, '')}Arn`;

/**
 * The run interpreter from `buildDefinition`, with a log group, X-Ray, alarms on failed and timed-out
 * executions, and a watcher that marks the run of any execution that died `interrupted` (resumable):
 * an EventBridge rule for Standard executions, a subscription to the log group for Express ones
 * (Express executions send no EventBridge status events; their ERROR-level log records their end).
 */
export class RunStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly failedAlarm: cloudwatch.Alarm;
  readonly timedOutAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: RunStateMachineProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const runnerNames = Object.fromEntries(Object.keys(props.runners).map((type) => [type, `\${${substitutionName(type)}}`]));
    const definition = buildDefinition({
      advance: '${AdvanceArn}',
      repair: '${RepairArn}',
      continueRun: '${ContinueRunArn}',
      interrupted: '${InterruptedArn}',
      runners: runnerNames,
      timeoutsS: props.taskTimeoutsS,
    });
    const functions = [props.advance, props.repair, props.interrupted, ...Object.values(props.runners)];

    const logGroup = new logs.LogGroup(this, 'Logs', {
      logGroupName: `/aws/vendedlogs/states/${props.stateMachineName}`,
      retention: props.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineName: props.stateMachineName,
      stateMachineType: props.type,
      definitionBody: sfn.DefinitionBody.fromString(JSON.stringify(definition)),
      definitionSubstitutions: {
        AdvanceArn: props.advance.functionArn,
        RepairArn: props.repair.functionArn,
        InterruptedArn: props.interrupted.functionArn,
        ContinueRunArn: `arn:${Aws.PARTITION}:states:::states:startExecution`,
        ...Object.fromEntries(Object.entries(props.runners).map(([type, fn]) => [substitutionName(type), fn.functionArn])),
      },
      logs: { destination: logGroup, level: props.logLevel, includeExecutionData: true },
      tracingEnabled: true,
      ...(props.timeout === undefined ? {} : { timeout: props.timeout }),
    });

    // The definition invokes unqualified ARNs: no version or alias (`:*`) grant is needed.
    this.stateMachine.addToRolePolicy(new iam.PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: functions.map((fn) => fn.functionArn) }));
    acknowledgeNag(
      this.stateMachine.role,
      'AwsSolutions',
      'AwsSolutions-IAM5[Resource::*]',
      `${XRAY_REASON}; CloudWatch Logs delivery actions (logs:CreateLogDelivery, ...) also take "*" only`,
    );
    if (props.logLevel !== sfn.LogLevel.ALL) {
      acknowledgeNag(
        this.stateMachine,
        'AwsSolutions',
        'AwsSolutions-SF1',
        'the log level is a stack setting (logLevel), ERROR by default: logging ALL events costs more than an Express run, and each run records its own events in the table',
      );
    }
    const self = Arn.format(
      { service: 'states', resource: 'stateMachine', resourceName: props.stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME },
      stack,
    );
    this.stateMachine.addToRolePolicy(new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [self] }));

    const alarm = (id: string, what: string, metric: cloudwatch.Metric) =>
      new cloudwatch.Alarm(this, id, {
        alarmDescription: `flowmend executions ${what} on ${props.stateMachineName}`,
        metric,
        threshold: 1,
        evaluationPeriods: 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    const every5Minutes = { period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM };
    this.failedAlarm = alarm('ExecutionsFailed', 'failed', this.stateMachine.metricFailed(every5Minutes));
    this.timedOutAlarm = alarm('ExecutionsTimedOut', 'timed out', this.stateMachine.metricTimedOut(every5Minutes));

    if (props.type === sfn.StateMachineType.STANDARD) {
      new events.Rule(this, 'ExecutionDied', {
        description: `marks the run of a failed, timed-out or aborted ${props.stateMachineName} execution interrupted`,
        eventPattern: {
          source: ['aws.states'],
          detailType: ['Step Functions Execution Status Change'],
          detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [this.stateMachine.stateMachineArn] },
        },
        targets: [
          new eventsTargets.LambdaFunction(props.interrupted, { retryAttempts: 8, maxEventAge: Duration.hours(2), deadLetterQueue: props.deadLetters }),
        ],
      });
    } else {
      new logs.SubscriptionFilter(this, 'ExecutionDied', {
        logGroup,
        destination: new logsDestinations.LambdaDestination(props.interrupted),
        filterPattern: logs.FilterPattern.any(...EXECUTION_END_LOG_TYPES.map((type) => logs.FilterPattern.stringValue('$.type', '=', type))),
      });
    }
  }
}
