import { readFileSync } from 'node:fs';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { GSI, TABLE_KEYS } from '../../functions/adapters/table-schema.ts';
import { BLOB_PREFIX } from '../../functions/core/blob-store.ts';
import { RUN_STORE_ACTIONS, RUNNER_TIMEOUTS } from '../../infra/flowmend-stack.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { actionsOf, asCfn, logicalId, managedPoliciesOf, statementsOf } from './stack-helpers.ts';

const { template } = synthFlowmend();
const cfn = asCfn(template);
const fnId = (prefix: string) => logicalId(cfn, 'AWS::Lambda::Function', prefix);
const runnerPrefix = (type: string) => `Run${type[0]?.toUpperCase()}${type.slice(1)}`;
const RUNNER_TYPES = Object.keys(RUNNER_TIMEOUTS);

describe('FlowmendStack table', () => {
  it('is on demand, with point-in-time recovery, the TTL attribute and both GSIs of the adapter', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [
        { AttributeName: TABLE_KEYS.pk, KeyType: 'HASH' },
        { AttributeName: TABLE_KEYS.sk, KeyType: 'RANGE' },
      ],
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      TimeToLiveSpecification: { AttributeName: TABLE_KEYS.ttl, Enabled: true },
      GlobalSecondaryIndexes: [GSI.byWorkflow, GSI.byDay].map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.pk, KeyType: 'HASH' },
          { AttributeName: index.sk, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'KEYS_ONLY' },
      })),
    });
  });

  it('and the blob bucket are retained by default, destroyed when the prop says so', () => {
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Retain' });
    const destroy = synthFlowmend({ removalPolicy: 'destroy' }).template;
    destroy.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' });
    destroy.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete' });
  });
});

describe('FlowmendStack blob bucket', () => {
  it('is encrypted, private and expires its objects', () => {
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 90, Status: 'Enabled' })]) },
    });
  });
});

describe('FlowmendStack Lambdas', () => {
  it('run Node 24 on arm64 with tracing and no source maps, one per node type plus the engine, repair, start-run, the watcher, the API, scheduled-start and wake', () => {
    const functions = template.findResources('AWS::Lambda::Function');
    const codeRunner = fnId('RunCode');
    expect(Object.keys(functions)).toHaveLength(7 + RUNNER_TYPES.length);
    for (const [id, fn] of Object.entries(functions)) {
      if (id === codeRunner) continue;
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs24.x', Architectures: ['arm64'], TracingConfig: { Mode: 'Active' } });
      expect(JSON.stringify(fn.Properties.Environment ?? {})).not.toContain('source-maps');
    }
  });

  it("the code node's runner is Python 3.12 (run_code.handler), with a role that writes its own log group and nothing else", () => {
    const id = fnId('RunCode');
    expect(cfn.Resources[id]?.Properties).toMatchObject({
      Runtime: 'python3.12',
      Handler: 'run_code.handler',
      Architectures: ['arm64'],
      TracingConfig: { Mode: 'Active' },
    });
    // No environment at all: nothing of the engine's configuration reaches the user's Python.
    expect(cfn.Resources[id]?.Properties?.Environment).toBeUndefined();
    const actions = actionsOf(statementsOf(cfn, id));
    expect(actions.filter((a) => !/^(logs|xray):/.test(a))).toEqual([]);
    // The state machines run code nodes on it.
    const definitions = JSON.stringify(template.findResources('AWS::StepFunctions::StateMachine'));
    expect(definitions).toContain('RunCode');
  });

  it('give every function its own role', () => {
    const roles = Object.values(template.findResources('AWS::Lambda::Function')).map((fn) => JSON.stringify(fn.Properties.Role));
    expect(new Set(roles).size).toBe(roles.length);
  });

  it.each(RUNNER_TYPES.filter((type) => type !== 'code'))(
    'the %s runner has no table or bucket permission, and reads secret inputs under the prefix only (llm: and the Anthropic key)',
    (type) => {
      const id = fnId(runnerPrefix(type));
      const actions = actionsOf(statementsOf(cfn, id));
      expect(actions.filter((a) => /^(dynamodb|s3|kms):/i.test(a) || a === '*')).toEqual([]);
      const secretStatements = statementsOf(cfn, id).filter((s) => actionsOf([s]).some((a) => /^(secretsmanager|ssm):/.test(a)));
      const grants = secretStatements.map((s) => `${actionsOf([s]).join(',')} ${JSON.stringify(s.Resource)}`);
      expect(grants.filter((g) => g.includes('secret:flowmend/inputs/*'))).toEqual([expect.stringMatching(/^secretsmanager:GetSecretValue /)]);
      expect(grants.filter((g) => g.includes('parameter/flowmend/inputs/*'))).toEqual([expect.stringMatching(/^ssm:GetParameter /)]);
      const others = grants.filter((g) => !g.includes('flowmend/inputs/*'));
      if (type === 'llm') expect(others).toEqual([expect.stringMatching(/secretsmanager:GetSecretValue.*secret:flowmend\/anthropic-api-key-\?{6}/)]);
      else expect(others).toEqual([]);
      // No managed basic-execution policy (logs on every group): the role writes its own log group only.
      expect(managedPoliciesOf(cfn, id)).toEqual([]);
      const logStatements = statementsOf(cfn, id).filter((s) => actionsOf([s]).some((a) => a.startsWith('logs:')));
      expect(actionsOf(logStatements).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
      const ownLogGroup = logicalId(cfn, 'AWS::Logs::LogGroup', runnerPrefix(type));
      expect(logStatements.map((s) => JSON.stringify(s.Resource))).toEqual([JSON.stringify({ 'Fn::GetAtt': [ownLogGroup, 'Arn'] })]);
    },
  );

  it.each(RUNNER_TYPES)('the %s runner reserves no concurrency by default (a new account cannot), and what runnerConcurrency says when set', (type) => {
    expect(cfn.Resources[fnId(runnerPrefix(type))]?.Properties?.ReservedConcurrentExecutions).toBeUndefined();
    const reserved = asCfn(synthFlowmend({ runnerConcurrency: 10 }).template);
    expect(reserved.Resources[logicalId(reserved, 'AWS::Lambda::Function', runnerPrefix(type))]?.Properties?.ReservedConcurrentExecutions).toBe(10);
  });

  it('only the llm runner and repair may read the Anthropic key, by its configured name', () => {
    const { template: named } = synthFlowmend({ anthropicSecretName: 'team/claude-key' });
    const namedCfn = asCfn(named);
    const readers = Object.keys(named.findResources('AWS::Lambda::Function')).filter((id) =>
      JSON.stringify(statementsOf(namedCfn, id)).includes('secret:team/claude-key-'),
    );
    expect(readers.map((id) => id.replace(/Function[0-9A-F]{8}$/, '')).sort()).toEqual(['Repair', 'RunLlm']);
    const llm = namedCfn.Resources[logicalId(namedCfn, 'AWS::Lambda::Function', 'RunLlm')];
    expect(llm?.Properties?.Environment).toMatchObject({ Variables: { FLOWMEND_ANTHROPIC_SECRET_ID: 'team/claude-key' } });
    expect(JSON.stringify(statementsOf(namedCfn, logicalId(namedCfn, 'AWS::Lambda::Function', 'RunLlm')))).toContain('secret:team/claude-key-??????');
  });

  it('secret inputs: no runner grant with an empty secretInputPrefix; a prefix holding the Anthropic key is refused', () => {
    const none = asCfn(synthFlowmend({ secretInputPrefix: '' }).template);
    const granted = Object.keys(none.Resources).filter(
      (id) => none.Resources[id]?.Type === 'AWS::Lambda::Function' && actionsOf(statementsOf(none, id)).includes('ssm:GetParameter'),
    );
    expect(granted).toEqual([]);
    expect(() => synthFlowmend({ secretInputPrefix: 'flowmend/' })).toThrow(/Anthropic key must not be under secretInputPrefix/);
  });

  it("the engine gets the store adapter's table requests and the blob prefix, nothing wider, and cannot read the Anthropic key", () => {
    const statements = statementsOf(cfn, fnId('Advance'));
    const actions = actionsOf(statements);
    expect(actions.filter((a) => a.startsWith('dynamodb:')).sort()).toEqual([...RUN_STORE_ACTIONS].sort());
    expect(actions.filter((a) => a.startsWith('s3:')).sort()).toEqual(['s3:GetObject', 's3:PutObject']);
    const s3Resources = JSON.stringify(statements.filter((s) => actionsOf([s]).includes('s3:GetObject')).map((s) => s.Resource));
    expect(s3Resources).toContain('/runs/*');
    // The one secret it reads is the callback key's (test/infra/waits.test.ts).
    const secrets = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('secretsmanager:')));
    expect(secrets.map((s) => JSON.stringify(s.Resource))).toEqual([expect.stringContaining(':secret:Flowmend/callbacks-')]);
    expect(cfn.Resources[fnId('Advance')]?.Properties?.Environment).toMatchObject({
      Variables: { TABLE_NAME: expect.anything(), BUCKET_NAME: expect.anything(), FLOWMEND_RETENTION_DAYS: '90' },
    });
  });

  it('StartRun writes the table and may start both machines, and nothing else', () => {
    const statements = statementsOf(cfn, fnId('StartRun'));
    const starts = statements.filter((s) => actionsOf([s]).includes('states:StartExecution'));
    const machines = Object.keys(template.findResources('AWS::StepFunctions::StateMachine'));
    expect(
      starts
        .flatMap((s) => [s.Resource].flat())
        .map((r) => JSON.stringify(r))
        .sort(),
    ).toEqual(machines.map((id) => JSON.stringify({ Ref: id })).sort());
    expect(actionsOf(statements).filter((a) => /^(secretsmanager|lambda):/.test(a))).toEqual([]);
    // A retried start reads the run it already made, whose result may be a blob: read-only, the blob prefix only.
    const s3 = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('s3:')));
    expect(actionsOf(s3)).toEqual(['s3:GetObject']);
    expect(JSON.stringify(s3.map((s) => s.Resource))).toContain(`/${BLOB_PREFIX}*`);
  });

  it('the API Lambda answers before API Gateway gives up (29 s), a long-poll (20 s at most) and its reads included', () => {
    const timeout = cfn.Resources[fnId('Api')]?.Properties?.Timeout as number;
    expect(timeout).toBeLessThan(29);
    expect(timeout).toBeGreaterThanOrEqual(20 + 5);
  });

  it('repair reads and writes the table and reads the secret', () => {
    const actions = actionsOf(statementsOf(cfn, fnId('Repair')));
    expect(actions).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:Query', 'secretsmanager:GetSecretValue']));
  });
});

describe('FlowmendStack state machines', () => {
  const machines = template.findResources('AWS::StepFunctions::StateMachine');

  it('are deployed twice, Express and Standard, with logging and X-Ray tracing', () => {
    const byType = Object.values(machines)
      .map((m) => m.Properties.StateMachineType)
      .sort();
    expect(byType).toEqual(['EXPRESS', 'STANDARD']);
    for (const machine of Object.values(machines)) {
      expect(machine.Properties).toMatchObject({
        TracingConfiguration: { Enabled: true },
        LoggingConfiguration: { Level: 'ERROR', IncludeExecutionData: true, Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: expect.anything() } }] },
      });
    }
  });

  it('log at the level set in CDK context', () => {
    const { template: verbose } = synthFlowmend({}, { context: { 'flowmend:logLevel': 'ALL' } });
    for (const machine of Object.values(verbose.findResources('AWS::StepFunctions::StateMachine'))) {
      expect(machine.Properties.LoggingConfiguration.Level).toBe('ALL');
    }
  });

  it('reject a bad setting with a message naming it', () => {
    expect(() => synthFlowmend({}, { context: { 'flowmend:logLevel': 'LOUD' } })).toThrow(/logLevel/);
    // OFF would leave the Express watcher blind: an Express run whose execution died would stay running.
    expect(() => synthFlowmend({ logLevel: 'OFF' })).toThrow(/logLevel: OFF would blind the watcher/);
  });

  it.each(['Express', 'Standard'])('%s may invoke every Lambda and start only itself (continue-as-new)', (name) => {
    const id = logicalId(cfn, 'AWS::StepFunctions::StateMachine', name);
    const statements = statementsOf(cfn, id);
    const invoked = statements.filter((s) => actionsOf([s]).includes('lambda:InvokeFunction')).flatMap((s) => s.Resource as unknown[]);
    for (const fn of Object.keys(template.findResources('AWS::Lambda::Function'))) {
      if (/^(StartRun|ScheduledStart|Api|Wake)/.test(fn)) expect(JSON.stringify(invoked)).not.toContain(`"${fn}"`);
      else expect(JSON.stringify(invoked)).toContain(`"${fn}"`);
    }
    const starts = statements.filter((s) => actionsOf([s]).includes('states:StartExecution'));
    expect(starts).toHaveLength(1);
    expect(JSON.stringify(starts[0]?.Resource)).toContain(`:stateMachine:Flowmend-${name.toLowerCase()}`);
    expect(cfn.Resources[id]?.Properties?.StateMachineName).toBe(`Flowmend-${name.toLowerCase()}`);
  });

  it('raise an alarm on failed and on timed-out executions of each machine', () => {
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter((alarm) => alarm.Properties.Namespace === 'AWS/States');
    expect(alarms).toHaveLength(4);
    for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut']) {
      const watched = alarms
        .filter((alarm) => alarm.Properties.MetricName === metric)
        .map((alarm) => {
          expect(alarm.Properties).toMatchObject({ Namespace: 'AWS/States', Threshold: 1 });
          return alarm.Properties.Dimensions[0].Value.Ref as string;
        });
      expect(watched.sort(), metric).toEqual(Object.keys(machines).sort());
    }
  });

  it('send the end of a dead execution to the watcher: an EventBridge rule (Standard), a log subscription (Express)', () => {
    const watcher = fnId('MarkInterrupted');
    const standard = logicalId(cfn, 'AWS::StepFunctions::StateMachine', 'Standard');
    template.hasResourceProperties('AWS::Events::Rule', {
      EventPattern: {
        source: ['aws.states'],
        'detail-type': ['Step Functions Execution Status Change'],
        detail: { status: ['FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [{ Ref: standard }] },
      },
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [watcher, 'Arn'] }, DeadLetterConfig: Match.anyValue() })],
    });
    const expressLogs = logicalId(cfn, 'AWS::Logs::LogGroup', 'ExpressLogs');
    template.hasResourceProperties('AWS::Logs::SubscriptionFilter', {
      LogGroupName: { Ref: expressLogs },
      DestinationArn: { 'Fn::GetAtt': [watcher, 'Arn'] },
      FilterPattern: Match.stringLikeRegexp('ExecutionTimedOut'),
    });
    expect(cfn.Resources[watcher]?.Properties?.DeadLetterConfig).toBeDefined();
  });

  it('notify the alarm topic when one is given', () => {
    const topic = 'arn:aws:sns:us-east-1:123456789012:oncall';
    const { template: alerted } = synthFlowmend({ alarmTopicArn: topic });
    // The machines' four, and the schedules' two (a failed scheduled start, a fire that could not be delivered).
    expect(Object.keys(alerted.findResources('AWS::CloudWatch::Alarm'))).toHaveLength(6);
    for (const alarm of Object.values(alerted.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual([topic]);
    }
  });
});

describe('RUN_STORE_ACTIONS', () => {
  it('are exactly the requests the DynamoDB adapter sends (a new request needs a grant, an unused grant goes)', () => {
    const sources = ['dynamo-run-store.ts', 'dynamo-paging.ts']
      .map((f) => readFileSync(new URL(`../../functions/adapters/${f}`, import.meta.url), 'utf8'))
      .join('\n');
    const sent = new Set(
      [...sources.matchAll(/'(GetItem|PutItem|Query|UpdateItem|DeleteItem|Scan|BatchGetItem|BatchWriteItem|TransactWriteItems|TransactGetItems)'/g)].map(
        (m) => `dynamodb:${m[1] ?? ''}`,
      ),
    );
    expect([...sent].sort()).toEqual([...RUN_STORE_ACTIONS].sort());
  });
});
