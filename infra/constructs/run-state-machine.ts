import { Arn, ArnFormat, Aws, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { buildDefinition } from '../../functions/core/definition.ts';

export interface RunStateMachineProps {
  type: sfn.StateMachineType;
  /** Physical name; known before deploy so that the machine may start itself (continue-as-new) without a cycle. */
  stateMachineName: string;
  advance: lambda.IFunction;
  repair: lambda.IFunction;
  /** Runner Lambda per node type. */
  runners: Readonly<Record<string, lambda.IFunction>>;
  logLevel: sfn.LogLevel;
  logRetentionDays: number;
  timeout?: Duration;
}

const substitutionName = (nodeType: string): string => `Run${nodeType.replace(/[^A-Za-z0-9]/g, '')}Arn`;

/** The run interpreter from `buildDefinition`, with a log group, X-Ray and an alarm on failed executions. */
export class RunStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  readonly failedAlarm: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: RunStateMachineProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const runnerNames = Object.fromEntries(Object.keys(props.runners).map((type) => [type, `\${${substitutionName(type)}}`]));
    const definition = buildDefinition({
      advance: '${AdvanceArn}',
      repair: '${RepairArn}',
      continueRun: '${ContinueRunArn}',
      runners: runnerNames,
    });
    const functions = [props.advance, props.repair, ...Object.values(props.runners)];

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
        ContinueRunArn: `arn:${Aws.PARTITION}:states:::states:startExecution`,
        ...Object.fromEntries(Object.entries(props.runners).map(([type, fn]) => [substitutionName(type), fn.functionArn])),
      },
      logs: { destination: logGroup, level: props.logLevel, includeExecutionData: true },
      tracingEnabled: true,
      ...(props.timeout === undefined ? {} : { timeout: props.timeout }),
    });

    for (const fn of functions) fn.grantInvoke(this.stateMachine);
    const self = Arn.format(
      { service: 'states', resource: 'stateMachine', resourceName: props.stateMachineName, arnFormat: ArnFormat.COLON_RESOURCE_NAME },
      stack,
    );
    this.stateMachine.addToRolePolicy(new iam.PolicyStatement({ actions: ['states:StartExecution'], resources: [self] }));

    this.failedAlarm = new cloudwatch.Alarm(this, 'ExecutionsFailed', {
      alarmDescription: `flowmend runs failed on ${props.stateMachineName}`,
      metric: this.stateMachine.metricFailed({ period: Duration.minutes(5), statistic: cloudwatch.Stats.SUM }),
      threshold: 1,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}
