import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import { FlowmendApi } from './constructs/api.ts';
import { BlobBucket } from './constructs/blob-bucket.ts';
import { FlowmendFunction } from './constructs/flowmend-function.ts';
import { RunStateMachine } from './constructs/run-state-machine.ts';
import { RunTable } from './constructs/run-table.ts';
import { RunSchedules } from './constructs/schedules.ts';
import { grantRunControl } from './run-control-grants.ts';
import { type FlowmendSettings, type FlowmendStackProps, resolveSettings, toRemovalPolicy } from './props.ts';

/** Node types with a runner Lambda, and how long one call may take (Standard runs allow the Lambda maximum). */
export const RUNNER_TIMEOUTS: Readonly<Record<string, Duration>> = {
  shell: Duration.minutes(15),
  http: Duration.minutes(15),
  llm: Duration.minutes(15),
  transform: Duration.minutes(1),
};

/** The whole engine in one account: table, blob bucket, engine / runner / repair Lambdas, Express and Standard machines. */
export class FlowmendStack extends Stack {
  readonly settings: FlowmendSettings;
  readonly express: RunStateMachine;
  readonly standard: RunStateMachine;
  readonly api: FlowmendApi;
  /** Where schedules live and what they invoke; pass it to `ScheduledWorkflow`. */
  readonly schedules: RunSchedules;

  constructor(scope: Construct, id: string, props: FlowmendStackProps = {}) {
    super(scope, id, props);
    const settings = resolveSettings(this.node, props);
    this.settings = settings;
    const removalPolicy = toRemovalPolicy(settings.removalPolicy);

    const { table } = new RunTable(this, 'Runs', { removalPolicy });
    const { bucket } = new BlobBucket(this, 'Blobs', { removalPolicy, expiryDays: settings.retentionDays });
    const anthropicKey = secretsmanager.Secret.fromSecretNameV2(this, 'AnthropicKey', settings.anthropicSecretName);

    const lambda = (id: string, handler: string, description: string, timeout: Duration, environment: Record<string, string> = {}) =>
      new FlowmendFunction(this, id, {
        handler,
        description,
        timeout,
        environment,
        memoryMb: settings.lambdaMemoryMb,
        logRetentionDays: settings.logRetentionDays,
      }).fn;
    const storeEnv = {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      FLOWMEND_RETENTION_DAYS: String(settings.retentionDays),
    };
    const secretEnv = { FLOWMEND_ANTHROPIC_SECRET_ID: settings.anthropicSecretName };

    const advance = lambda('Advance', 'advance', 'flowmend engine: one step of a run', Duration.minutes(1), storeEnv);
    table.grantReadWriteData(advance);
    bucket.grantReadWrite(advance);

    const repair = lambda('Repair', 'repair', 'flowmend repair: patches a failed workflow', Duration.minutes(5), {
      ...storeEnv,
      ...secretEnv,
    });
    table.grantReadWriteData(repair);
    bucket.grantReadWrite(repair);
    anthropicKey.grantRead(repair);

    // Runners execute user-supplied work: no table, no bucket (large outputs go up through presigned URLs).
    const runners = Object.fromEntries(
      Object.entries(RUNNER_TIMEOUTS).map(([type, timeout]) => {
        const fn = lambda(`Run${type[0]?.toUpperCase()}${type.slice(1)}`, `run-${type}`, `flowmend ${type} runner`, timeout, type === 'llm' ? secretEnv : {});
        return [type, fn] as const;
      }),
    );
    const llmRunner = runners.llm;
    if (llmRunner !== undefined) anthropicKey.grantRead(llmRunner);

    const machine = (id: string, type: sfn.StateMachineType, suffix: string) =>
      new RunStateMachine(this, id, {
        type,
        stateMachineName: `${this.stackName}-${suffix}`,
        advance,
        repair,
        runners,
        logLevel: sfn.LogLevel[settings.logLevel],
        logRetentionDays: settings.logRetentionDays,
      });
    this.express = machine('Express', sfn.StateMachineType.EXPRESS, 'express');
    this.standard = machine('Standard', sfn.StateMachineType.STANDARD, 'standard');

    const startRun = lambda('StartRun', 'start-run', 'flowmend: validates a workflow, creates a run and starts its execution', Duration.seconds(30), {
      ...storeEnv,
      EXPRESS_STATE_MACHINE_ARN: this.express.stateMachine.stateMachineArn,
      STANDARD_STATE_MACHINE_ARN: this.standard.stateMachine.stateMachineArn,
    });
    table.grantReadWriteData(startRun);
    for (const sm of [this.express, this.standard]) sm.stateMachine.grantStartExecution(startRun);

    // The REST API and the target of every schedule: both start, and the API also resumes and cancels, runs.
    const machineEnv = {
      EXPRESS_STATE_MACHINE_ARN: this.express.stateMachine.stateMachineArn,
      STANDARD_STATE_MACHINE_ARN: this.standard.stateMachine.stateMachineArn,
    };
    const scheduledStart = lambda('ScheduledStart', 'scheduled-start', 'flowmend: starts one run of a workflow per schedule fire time', Duration.seconds(30), { ...storeEnv, ...machineEnv });
    grantRunControl({ fn: scheduledStart, table, bucket, machines: [this.express, this.standard], stopAndDescribe: false });
    this.schedules = new RunSchedules(this, 'Schedules', { mode: settings.scheduleMode, target: scheduledStart, name: this.stackName });
    const apiFn = lambda('Api', 'api', 'flowmend REST API: runs, workflows and schedules', Duration.seconds(30), { ...storeEnv, ...machineEnv, ...this.schedules.environment });
    grantRunControl({ fn: apiFn, table, bucket, machines: [this.express, this.standard], stopAndDescribe: true });
    this.schedules.grantManage(apiFn);
    this.api = new FlowmendApi(this, 'RestApi', { handler: apiFn, auth: settings.apiAuth, throttle: { rateLimit: 50, burstLimit: 100 } });
    new CfnOutput(this, 'RestApiId', { value: this.api.api.restApiId, description: 'LocalStack serves the API at <endpoint>/restapis/<id>/v1/_user_request_/' });
    new CfnOutput(this, 'ApiUrl', { value: this.api.url, description: `flowmend REST API (${settings.apiAuth === 'iam' ? 'SigV4-signed, IAM' : 'x-api-key header'})` });
    if (this.api.apiKey !== undefined) new CfnOutput(this, 'ApiKeyId', { value: this.api.apiKey.keyId, description: 'aws apigateway get-api-key --include-value --api-key <id>' });

    if (settings.alarmTopicArn !== undefined) {
      const topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn);
      for (const sm of [this.express, this.standard]) sm.failedAlarm.addAlarmAction(new cloudwatchActions.SnsAction(topic));
    }

    new CfnOutput(this, 'StartRunFunctionName', { value: startRun.functionName });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'BucketName', { value: bucket.bucketName });
    new CfnOutput(this, 'ExpressStateMachineArn', { value: this.express.stateMachine.stateMachineArn });
    new CfnOutput(this, 'StandardStateMachineArn', { value: this.standard.stateMachine.stateMachineArn });
  }
}
