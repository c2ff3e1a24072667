import { ArnFormat, CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambdaLib from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { BLOB_PREFIX, REPAIR_MAX_S, TASK_TIMEOUT_MARGIN_S } from '../../functions/core/index.ts';
import { WAIT_SERVICES_ENTRY, WAIT_SERVICES_FILE } from '../../functions/hosts/lambda/bundled-wait-services.ts';
import { acknowledgeNag } from '../nag.ts';
import { type FlowmendSettings, type FlowmendSettingsInput, resolveSettings, toRemovalPolicy } from '../props.ts';
import { grantRunControl } from '../run-control-grants.ts';
import { grantSecretInputs } from '../secret-input-grants.ts';
import { FlowmendApi } from './api.ts';
import { BlobBucket } from './blob-bucket.ts';
import { FlowmendFunction } from './flowmend-function.ts';
import { PythonRunnerFunction } from './python-runner-function.ts';
import { RunDashboard } from './run-dashboard.ts';
import { RunStateMachine } from './run-state-machine.ts';
import { RunTable } from './run-table.ts';
import { RunSchedules } from './schedules.ts';
import { RunWaits, stateMachineArnByName } from './waits.ts';

/**
 * Node types with a runner Lambda, and how long one call may take (Standard runs allow the Lambda maximum).
 * The file family has none: it needs the local host's workspace, and validation on AWS says so. Every
 * runner is a Node function but code's, a Python one (PythonRunnerFunction).
 */
export const RUNNER_TIMEOUTS: Readonly<Record<string, Duration>> = {
  shell: Duration.minutes(15),
  http: Duration.minutes(15),
  llm: Duration.minutes(15),
  transform: Duration.minutes(1),
  // Streamable HTTP servers only (a Lambda keeps no stdio server process); no table, no bucket, like every runner.
  mcp: Duration.minutes(15),
  // pflow's code node: functions/hosts/lambda-python/run_code.py.
  code: Duration.minutes(15),
};

const ADVANCE_TIMEOUT = Duration.minutes(1);
/** The engine continues an Express execution before a repair that may not fit (REPAIR_MAX_S). */
const REPAIR_TIMEOUT = Duration.seconds(REPAIR_MAX_S);
const INTERRUPTED_TIMEOUT = Duration.seconds(30);
/** The API Lambda's timeout: under API Gateway's 29 s integration timeout (see below). */
export const API_TIMEOUT_S = 25;

/** What DynamoRunStore sends (functions/adapters/dynamo-run-store.ts); a test keeps the two in step. */
export const RUN_STORE_ACTIONS = ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:BatchGetItem', 'dynamodb:BatchWriteItem'];

export interface FlowmendEngineProps extends FlowmendSettingsInput {
  /**
   * Prefix of the names the engine gives what it names: its state machines (`<name>-express`, `<name>-standard`),
   * schedule group, EventBridge rules and dashboard (`<name>-runs`). The stack's name by default; give each
   * engine its own when a stack holds two.
   */
  name?: string;
}

/**
 * The whole engine as a construct, for a stack of your own: the runs' table and blob bucket, the engine, runner
 * and repair Lambdas (the code runner in Python), the Express and Standard state machines, the REST API,
 * schedules, wake-ups of waiting runs, alarms and the dashboard. `FlowmendStack` is a stack holding one.
 * Settings come from these props, then from `flowmend:<key>` CDK context (infra/props.ts documents each).
 */
export class FlowmendEngine extends Construct {
  readonly settings: FlowmendSettings;
  readonly express: RunStateMachine;
  readonly standard: RunStateMachine;
  readonly api: FlowmendApi;
  /** Where schedules live and what they invoke; pass it to `ScheduledWorkflow`. */
  readonly schedules: RunSchedules;
  /** Wake-up schedules and the callback secret of waiting runs. */
  readonly waits: RunWaits;

  constructor(scope: Construct, id: string, props: FlowmendEngineProps = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const { name = stack.stackName, ...settingsInput } = props;
    const settings = resolveSettings(this.node, settingsInput);
    this.settings = settings;
    const removalPolicy = toRemovalPolicy(settings.removalPolicy);

    const { table } = new RunTable(this, 'Runs', { removalPolicy });
    const { bucket } = new BlobBucket(this, 'Blobs', { removalPolicy, expiryDays: settings.retentionDays });
    const anthropicKey = secretsmanager.Secret.fromSecretNameV2(this, 'AnthropicKey', settings.anthropicSecretName);
    // grantRead covers the secret's ARNs (its name and a random suffix). A secret not created yet (the stack
    // deploys without one, and repair then runs its rules only) is asked for by its name alone: with that
    // ARN granted too, the answer is "no such secret", not "access denied".
    const grantAnthropicKey = (fn: lambdaLib.IFunction) => {
      anthropicKey.grantRead(fn);
      fn.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['secretsmanager:GetSecretValue'],
          resources: [
            stack.formatArn({
              service: 'secretsmanager',
              resource: 'secret',
              resourceName: settings.anthropicSecretName,
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          ],
        }),
      );
    };

    const lambda = (
      id: string,
      handler: string,
      description: string,
      timeout: Duration,
      environment: Record<string, string> = {},
      runner: { reservedConcurrency?: number; secretResolverFile?: boolean; sideBundles?: { entry: string; file: string }[] } = {},
      // The functions that write runs carry the OpenTelemetry SDK beside their bundle when they export to an endpoint.
      writesRuns = 'TABLE_NAME' in environment && settings.otlpEndpoint !== undefined,
    ) =>
      new FlowmendFunction(this, id, {
        handler,
        description,
        timeout,
        environment,
        memoryMb: settings.lambdaMemoryMb,
        logRetentionDays: settings.logRetentionDays,
        logLevel: settings.functionLogLevel,
        ...(runner.reservedConcurrency === undefined ? {} : { reservedConcurrency: runner.reservedConcurrency }),
        ...(runner.secretResolverFile ? { secretResolverFile: true } : {}),
        ...(writesRuns ? { otelFile: true } : {}),
        ...(runner.sideBundles ? { sideBundles: runner.sideBundles } : {}),
      }).fn;
    // The store adapter's requests only (no Scan, DeleteItem, UpdateItem, DescribeTable), on the table and its indexes.
    // The table only, not its indexes: listing runs (the indexes) is the API's, not the engine's.
    const grantRunStore = (fn: iam.IGrantable) =>
      fn.grantPrincipal.addToPrincipalPolicy(new iam.PolicyStatement({ actions: RUN_STORE_ACTIONS, resources: [table.tableArn] }));
    // Blobs live under runs/<runId>/...; presigned PUTs for runners are signed with the engine's own grant.
    const bucketId = stack.resolve(stack.getLogicalId(bucket.node.defaultChild as s3.CfnBucket)) as string;
    const grantBlobs = (fn: lambdaLib.IFunction) => {
      fn.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject', 's3:PutObject'], resources: [bucket.arnForObjects(`${BLOB_PREFIX}*`)] }));
      if (fn.role) {
        acknowledgeNag(
          fn.role,
          'AwsSolutions',
          `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${BLOB_PREFIX}*]`,
          `blob keys are made per run and node at run time (${BLOB_PREFIX}<runId>/...): the grant is the engine's prefix, GetObject and PutObject only`,
        );
      }
    };
    const storeEnv = {
      TABLE_NAME: table.tableName,
      BUCKET_NAME: bucket.bucketName,
      FLOWMEND_RETENTION_DAYS: String(settings.retentionDays),
      // The functions that write runs tell what they did: log lines, EMF metrics, OTLP when an endpoint is set.
      POWERTOOLS_SERVICE_NAME: 'flowmend',
      POWERTOOLS_METRICS_NAMESPACE: settings.metricsNamespace,
      ...(settings.otlpEndpoint === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: settings.otlpEndpoint }),
    };
    const secretEnv = { FLOWMEND_ANTHROPIC_SECRET_ID: settings.anthropicSecretName };

    // Waits' clients (Scheduler, Secrets Manager) in a file of their own, loaded at a run's first wait only.
    const advance = lambda(
      'Advance',
      'advance',
      'flowmend engine: one step of a run',
      ADVANCE_TIMEOUT,
      {
        ...storeEnv,
        ...(settings.maxAdvancesPerExecution === undefined ? {} : { FLOWMEND_MAX_ADVANCES_PER_EXECUTION: String(settings.maxAdvancesPerExecution) }),
      },
      { sideBundles: [{ entry: WAIT_SERVICES_ENTRY, file: WAIT_SERVICES_FILE }] },
    );
    grantRunStore(advance);
    grantBlobs(advance);

    const repair = lambda('Repair', 'repair', 'flowmend repair: patches a failed workflow', REPAIR_TIMEOUT, {
      ...storeEnv,
      ...secretEnv,
    });
    grantRunStore(repair);
    grantBlobs(repair);
    grantAnthropicKey(repair);

    // Runners execute user-supplied work: no table, no bucket (large outputs go up through presigned URLs).
    const runners = Object.fromEntries(
      Object.entries(RUNNER_TIMEOUTS)
        .filter(([type]) => type !== 'code')
        .map(([type, timeout]) => {
          const concurrency = settings.runnerConcurrency === 0 ? undefined : settings.runnerConcurrency;
          const fn = lambda(
            `Run${type[0]?.toUpperCase()}${type.slice(1)}`,
            `run-${type}`,
            `flowmend ${type} runner`,
            timeout,
            type === 'llm' ? secretEnv : {},
            // Every runner reads secret inputs (`from`), from a file it loads only when a node has one.
            { ...(concurrency === undefined ? {} : { reservedConcurrency: concurrency }), secretResolverFile: true },
          );
          return [type, fn] as const;
        }),
    );
    // The code node's runner is Python; its role writes its log group only (no secret inputs: it refuses them).
    runners.code = new PythonRunnerFunction(this, 'RunCode', {
      description: 'flowmend code runner (Python)',
      timeout: RUNNER_TIMEOUTS.code as Duration,
      memoryMb: settings.lambdaMemoryMb,
      logRetentionDays: settings.logRetentionDays,
      logLevel: settings.functionLogLevel,
      ...(settings.runnerConcurrency === 0 ? {} : { reservedConcurrency: settings.runnerConcurrency }),
    }).fn;
    const llmRunner = runners.llm;
    if (llmRunner !== undefined) grantAnthropicKey(llmRunner);
    // Secret inputs are read by the runner that uses them, at use: only those under the prefix.
    if (settings.secretInputPrefix !== '') {
      for (const [type, fn] of Object.entries(runners)) if (type !== 'code') grantSecretInputs(fn, settings.secretInputPrefix);
    }

    // Watcher events (EventBridge, log subscription) are asynchronous: what cannot be delivered or handled is kept here.
    const deadLetters = new sqs.Queue(this, 'WatcherDeadLetters', {
      enforceSSL: true,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      retentionPeriod: Duration.days(14),
    });
    acknowledgeNag(deadLetters, 'AwsSolutions', 'AwsSolutions-SQS3', 'this queue is itself the dead-letter queue of the watcher');
    acknowledgeNag(
      deadLetters,
      'Serverless',
      'Serverless-SQSRedrivePolicy',
      'this queue is itself the dead-letter queue of the watcher: nothing consumes it to redrive from',
    );
    const interrupted = new FlowmendFunction(this, 'MarkInterrupted', {
      handler: 'mark-interrupted',
      description: 'flowmend: marks the run of an execution that died interrupted (resumable)',
      timeout: INTERRUPTED_TIMEOUT,
      environment: storeEnv,
      memoryMb: settings.lambdaMemoryMb,
      logRetentionDays: settings.logRetentionDays,
      logLevel: settings.functionLogLevel,
      deadLetterQueue: deadLetters,
      ...(settings.otlpEndpoint === undefined ? {} : { otelFile: true }),
    }).fn;
    grantRunStore(interrupted);
    grantBlobs(interrupted);

    const taskTimeoutsS = {
      advance: ADVANCE_TIMEOUT.toSeconds() + TASK_TIMEOUT_MARGIN_S,
      repair: REPAIR_TIMEOUT.toSeconds() + TASK_TIMEOUT_MARGIN_S,
      interrupted: INTERRUPTED_TIMEOUT.toSeconds() + TASK_TIMEOUT_MARGIN_S,
      runners: Object.fromEntries(Object.entries(RUNNER_TIMEOUTS).map(([type, timeout]) => [type, timeout.toSeconds() + TASK_TIMEOUT_MARGIN_S])),
    };
    const machine = (id: string, type: sfn.StateMachineType, suffix: string) =>
      new RunStateMachine(this, id, {
        type,
        stateMachineName: `${name}-${suffix}`,
        advance,
        repair,
        interrupted,
        deadLetters,
        taskTimeoutsS,
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
    grantRunStore(startRun);
    // A retried start reads the run it made, whose result may already be a blob (it writes none).
    startRun.addToRolePolicy(new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [bucket.arnForObjects(`${BLOB_PREFIX}*`)] }));
    if (startRun.role) {
      acknowledgeNag(
        startRun.role,
        'AwsSolutions',
        `AwsSolutions-IAM5[Resource::<${bucketId}.Arn>/${BLOB_PREFIX}*]`,
        `blob keys are made per run at run time (${BLOB_PREFIX}<runId>/...): the grant is the engine's prefix, GetObject only`,
      );
    }
    for (const sm of [this.express, this.standard]) sm.stateMachine.grantStartExecution(startRun);

    // The REST API and the target of every schedule: both start, and the API also resumes and cancels, runs.
    const machineEnv = {
      EXPRESS_STATE_MACHINE_ARN: this.express.stateMachine.stateMachineArn,
      STANDARD_STATE_MACHINE_ARN: this.standard.stateMachine.stateMachineArn,
    };
    const scheduledStart = lambda('ScheduledStart', 'scheduled-start', 'flowmend: starts one run of a workflow per schedule fire time', Duration.seconds(30), {
      ...storeEnv,
      ...machineEnv,
    });
    grantRunControl({ fn: scheduledStart, table, machines: [this.express, this.standard], stopAndDescribe: false });
    this.schedules = new RunSchedules(this, 'Schedules', { mode: settings.scheduleMode, target: scheduledStart, name });
    // Under API Gateway's 29 s integration timeout, with room after a 20 s long-poll for its reads: a
    // slower answer is cut by the gateway (a bare 504) while the Lambda would go on.
    const apiFn = lambda('Api', 'api', 'flowmend REST API: runs, workflows and schedules', Duration.seconds(API_TIMEOUT_S), {
      ...storeEnv,
      ...machineEnv,
      ...this.schedules.environment,
    });
    grantRunControl({ fn: apiFn, table, machines: [this.express, this.standard], stopAndDescribe: true });
    this.schedules.grantManage(apiFn);
    const tableId = stack.resolve(stack.getLogicalId(table.node.defaultChild as dynamodb.CfnTable)) as string;
    for (const fn of [scheduledStart, apiFn]) {
      grantBlobs(fn);
      if (fn.role) {
        acknowledgeNag(
          fn.role,
          'AwsSolutions',
          `AwsSolutions-IAM5[Resource::<${tableId}.Arn>/index/*]`,
          'listing runs queries the run indexes (gsi1, gsi2), whose ARNs are the table ARN and /index/<name>',
        );
      }
    }
    if (apiFn.role) {
      for (const sm of [this.express, this.standard]) {
        const smId = stack.resolve(stack.getLogicalId(sm.stateMachine.node.defaultChild as sfn.CfnStateMachine)) as string;
        acknowledgeNag(
          apiFn.role,
          'AwsSolutions',
          `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:{"Fn::Select":[6,{"Fn::Split":[":",{"Ref":"${smId}"}]}]}:*]`,
          "execution names are made per run at run time (the owner id): Describe/StopExecution on this machine's executions only",
        );
      }
      acknowledgeNag(
        apiFn.role,
        'AwsSolutions',
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/${name}/*]`,
        "schedules are named after workflows registered at run time: the grant is the stack's own schedule group",
      );
      acknowledgeNag(
        apiFn.role,
        'AwsSolutions',
        `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:events:<AWS::Region>:<AWS::AccountId>:rule/${name}-*]`,
        "rules (scheduleMode rules) are named after workflows registered at run time: the grant is the rules named with the stack's prefix",
      );
    }
    this.api = new FlowmendApi(this, 'RestApi', { handler: apiFn, auth: settings.apiAuth, throttle: { rateLimit: 50, burstLimit: 100 } });

    // Waiting runs (DESIGN 7b): the wake Lambda finds the machines by name, the engine the callback secret by name.
    const wake = new FlowmendFunction(this, 'Wake', {
      handler: 'wake-run',
      description: 'flowmend: starts the execution that continues a waiting run, when its wake-up schedule fires',
      timeout: Duration.seconds(30),
      environment: {
        TABLE_NAME: table.tableName,
        EXPRESS_STATE_MACHINE_ARN: stateMachineArnByName(this, `${name}-express`),
        STANDARD_STATE_MACHINE_ARN: stateMachineArnByName(this, `${name}-standard`),
      },
      memoryMb: settings.lambdaMemoryMb,
      logRetentionDays: settings.logRetentionDays,
      deadLetterQueue: deadLetters,
    }).fn;
    wake.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['states:StartExecution'],
        resources: ['express', 'standard'].map((suffix) => stateMachineArnByName(this, `${name}-${suffix}`)),
      }),
    );
    this.waits = new RunWaits(this, 'Waits', {
      name,
      advance,
      wake,
      deadLetters,
      apiUrl: this.api.url,
      wakeups: settings.waitWakeups ?? (settings.scheduleMode === 'rules' ? 'none' : 'scheduler'),
    });
    new CfnOutput(this, 'RestApiId', {
      value: this.api.api.restApiId,
      description: 'LocalStack serves the API at <endpoint>/restapis/<id>/v1/_user_request_/',
    });
    new CfnOutput(this, 'ApiUrl', {
      value: this.api.url,
      description: `flowmend REST API (${settings.apiAuth === 'iam' ? 'SigV4-signed, IAM' : 'x-api-key header'})`,
    });
    if (this.api.apiKey !== undefined)
      new CfnOutput(this, 'ApiKeyId', { value: this.api.apiKey.keyId, description: 'aws apigateway get-api-key --include-value --api-key <id>' });

    if (settings.alarmTopicArn !== undefined) {
      const topic = sns.Topic.fromTopicArn(this, 'AlarmTopic', settings.alarmTopicArn);
      for (const sm of [this.express, this.standard]) {
        for (const alarm of [sm.failedAlarm, sm.timedOutAlarm]) alarm.addAlarmAction(new cloudwatchActions.SnsAction(topic));
      }
      for (const alarm of this.schedules.alarms) alarm.addAlarmAction(new cloudwatchActions.SnsAction(topic));
    }

    const dashboard = new RunDashboard(this, 'RunDashboard', {
      dashboardName: `${name}-runs`,
      namespace: settings.metricsNamespace,
      logGroups: [advance, repair, interrupted, startRun, scheduledStart, apiFn].map((fn) => fn.logGroup),
    });
    new CfnOutput(this, 'DashboardName', {
      value: dashboard.dashboard.dashboardName,
      description: 'CloudWatch dashboard of the runs (EMF metrics and log lines)',
    });
    new CfnOutput(this, 'StartRunFunctionName', { value: startRun.functionName });
    new CfnOutput(this, 'TableName', { value: table.tableName });
    new CfnOutput(this, 'BucketName', { value: bucket.bucketName });
    new CfnOutput(this, 'ExpressStateMachineArn', { value: this.express.stateMachine.stateMachineArn });
    new CfnOutput(this, 'StandardStateMachineArn', { value: this.standard.stateMachine.stateMachineArn });
  }
}
