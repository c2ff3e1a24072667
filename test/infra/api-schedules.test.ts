import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { API_STAGE } from '../../infra/constructs/api.ts';
import { RUN_CONTROL_TABLE_ACTIONS } from '../../infra/run-control-grants.ts';
import type { CfnTemplate, Json } from '../support/cfn-asl.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { actionsOf, asCfn, logicalId, type Statement, statementsOf } from './stack-helpers.ts';

// Two synths for the whole file: the defaults (IAM, Scheduler), and both switches flipped (API key, rules).
const byDefault = synthFlowmend();
const switched = synthFlowmend({ apiAuth: 'apiKey', scheduleMode: 'rules' });
const cfn = asCfn(byDefault.template);
const cfnSwitched = asCfn(switched.template);
const outputsOf = (template: CfnTemplate) => (template as CfnTemplate & { Outputs?: Record<string, { Value: Json }> }).Outputs ?? {};
const fnId = (template: CfnTemplate, prefix: string) => logicalId(template, 'AWS::Lambda::Function', prefix);
const allMethods = (template: CfnTemplate) => Object.values(template.Resources).filter((r) => r.Type === 'AWS::ApiGateway::Method');
/** The callback route of waiting runs has no authorization of its own (test/infra/waits.test.ts); every other method has. */
const methods = (template: CfnTemplate) => allMethods(template).filter((m) => m.Properties?.HttpMethod !== 'POST');
const ofType = (template: CfnTemplate, type: string) => Object.entries(template.Resources).filter(([, r]) => r.Type === type);
const withAction = (statements: Statement[], action: string) => statements.filter((s) => actionsOf([s]).includes(action));
const text = (value: unknown) => JSON.stringify(value);

describe('REST API', () => {
  it('is one regional API Gateway v1 API whose every method needs SigV4 (IAM) by default, proxied to the API Lambda', () => {
    expect(ofType(cfn, 'AWS::ApiGateway::RestApi')).toHaveLength(1);
    byDefault.template.hasResourceProperties('AWS::ApiGateway::RestApi', { EndpointConfiguration: { Types: ['REGIONAL'] } });
    const all = methods(cfn);
    expect(all.length).toBeGreaterThanOrEqual(2); // ANY / and ANY /{proxy+}
    for (const method of all) {
      expect(method.Properties).toMatchObject({ AuthorizationType: 'AWS_IAM', HttpMethod: 'ANY', Integration: { Type: 'AWS_PROXY' } });
      expect(text(method.Properties?.Integration)).toContain(fnId(cfn, 'Api'));
    }
    expect(ofType(cfn, 'AWS::ApiGateway::ApiKey')).toHaveLength(0);
    byDefault.template.hasResourceProperties('AWS::ApiGateway::Stage', { StageName: API_STAGE, MethodSettings: Match.anyValue(), TracingEnabled: true });
  });

  it('gives the API URL as a stack output', () => {
    const outputs = outputsOf(cfn);
    expect(text(outputs.ApiUrl?.Value)).toMatch(/execute-api/);
    expect(text(outputs.ApiUrl?.Value)).toMatch(new RegExp(`/",\\{"Ref":"[A-Za-z0-9]*DeploymentStage${API_STAGE}[A-Za-z0-9]*"\\},"/`));
    expect(outputs.ApiKeyId).toBeUndefined();
  });

  it('with apiAuth apiKey, wants an API key on every method, through a usage plan with throttling, and outputs the key id', () => {
    for (const method of methods(cfnSwitched)) expect(method.Properties).toMatchObject({ AuthorizationType: 'NONE', ApiKeyRequired: true });
    expect(ofType(cfnSwitched, 'AWS::ApiGateway::ApiKey')).toHaveLength(1);
    switched.template.hasResourceProperties('AWS::ApiGateway::UsagePlan', {
      Throttle: { RateLimit: 50, BurstLimit: 100 },
      ApiStages: [Match.objectLike({ Stage: Match.anyValue() })],
    });
    expect(ofType(cfnSwitched, 'AWS::ApiGateway::UsagePlanKey')).toHaveLength(1);
    expect(outputsOf(cfnSwitched).ApiKeyId).toBeDefined();
  });
});

describe('API Lambda permissions', () => {
  const api = fnId(cfn, 'Api');
  const statements = statementsOf(cfn, api);
  const actions = new Set(actionsOf(statements));

  it('reads and writes table items and queries its indexes, without Scan or table administration', () => {
    const table = statements.filter((s) => actionsOf([s]).some((a) => a.startsWith('dynamodb:')));
    expect(new Set(actionsOf(table))).toEqual(new Set(RUN_CONTROL_TABLE_ACTIONS));
    expect(text(table.map((s) => s.Resource))).toContain('/index/*');
  });

  it('reads and puts large values in the bucket but never deletes them', () => {
    expect(actions.has('s3:PutObject')).toBe(true);
    expect([...actions].some((a) => a.startsWith('s3:GetObject'))).toBe(true);
    expect([...actions].filter((a) => /^s3:Delete/.test(a))).toEqual([]);
  });

  it('starts executions of both machines, and describes and stops only their executions', () => {
    const starts = withAction(statements, 'states:StartExecution');
    expect(text(starts.map((s) => s.Resource))).toMatch(/ExpressStateMachine.*StandardStateMachine|StandardStateMachine.*ExpressStateMachine/);
    for (const action of ['states:DescribeExecution', 'states:StopExecution']) {
      const [statement, ...more] = withAction(statements, action);
      expect(more).toEqual([]);
      expect(text(statement?.Resource)).toContain(':execution:');
    }
  });

  it('manages schedules only in its own group, and may pass the scheduler role to Scheduler only', () => {
    const manage = withAction(statements, 'scheduler:CreateSchedule');
    expect(manage).toHaveLength(1);
    expect(text(manage[0]?.Resource)).toMatch(/schedule\/.*\/\*/);
    const pass = withAction(statements, 'iam:PassRole') as (Statement & { Condition?: Json })[];
    expect(pass).toHaveLength(1);
    expect(text(pass[0]?.Resource)).toContain(logicalId(cfn, 'AWS::IAM::Role', 'SchedulesSchedulerRole'));
    expect(pass[0]?.Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
  });

  it('holds nothing else: no secret, no Lambda invoke, no wildcard action', () => {
    const allowed = /^(dynamodb|s3|states|scheduler|iam:PassRole|xray|logs)/;
    expect([...actions].filter((a) => !allowed.test(a))).toEqual([]);
    expect([...actions].filter((a) => a.endsWith(':*') || a === '*')).toEqual([]);
  });

  it('knows where the machines, the table and the schedules are', () => {
    const env = text(cfn.Resources[api]?.Properties?.Environment);
    for (const name of [
      'TABLE_NAME',
      'BUCKET_NAME',
      'EXPRESS_STATE_MACHINE_ARN',
      'STANDARD_STATE_MACHINE_ARN',
      'FLOWMEND_SCHEDULE_MODE',
      'FLOWMEND_SCHEDULE_NAME',
      'FLOWMEND_SCHEDULE_TARGET_ARN',
      'FLOWMEND_SCHEDULER_ROLE_ARN',
    ]) {
      expect(env).toContain(name);
    }
  });
});

describe('schedules', () => {
  it('run as a role that EventBridge Scheduler of this account alone assumes, and that can only invoke scheduled-start (and keep what it could not deliver)', () => {
    const roleId = logicalId(cfn, 'AWS::IAM::Role', 'SchedulesSchedulerRole');
    const role = cfn.Resources[roleId]?.Properties ?? {};
    expect(text(role.AssumeRolePolicyDocument)).toContain('scheduler.amazonaws.com');
    expect(text(role.AssumeRolePolicyDocument)).toContain('aws:SourceAccount');
    expect(role.ManagedPolicyArns).toBeUndefined();
    const policies = ofType(cfn, 'AWS::IAM::Policy').filter(([, p]) => text(p.Properties?.Roles).includes(roleId));
    const statements = policies.flatMap(([, p]) => (p.Properties?.PolicyDocument as { Statement: Statement[] } | undefined)?.Statement ?? []);
    const invoke = statements.filter((s) => actionsOf([s]).includes('lambda:InvokeFunction'));
    expect(actionsOf(invoke)).toEqual(['lambda:InvokeFunction']);
    expect(text(invoke[0]?.Resource)).toContain(fnId(cfn, 'ScheduledStart'));
    expect(text(invoke[0]?.Resource)).not.toContain(fnId(cfn, 'Api'));
    const rest = statements.filter((s) => !invoke.includes(s));
    expect(actionsOf(rest).every((a) => a.startsWith('sqs:'))).toBe(true);
    expect(text(rest.map((s) => s.Resource))).toContain(logicalId(cfn, 'AWS::SQS::Queue', 'SchedulesDeadLetters'));
  });

  it("keep a fire that could not be delivered in the schedules' dead-letter queue, and alarm on it and on a failed scheduled start", () => {
    const queue = logicalId(cfn, 'AWS::SQS::Queue', 'SchedulesDeadLetters');
    const env = cfn.Resources[fnId(cfn, 'Api')]?.Properties?.Environment as { Variables: Record<string, unknown> };
    expect(text(env.Variables.FLOWMEND_SCHEDULE_DLQ_ARN)).toContain(queue);
    const alarms = ofType(cfn, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties ?? {});
    const startErrors = alarms.find((a) => a.MetricName === 'Errors' && text(a.Dimensions).includes(fnId(cfn, 'ScheduledStart')));
    expect(startErrors).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' });
    expect(alarms.some((a) => a.MetricName === 'ApproximateNumberOfMessagesVisible' && text(a.Dimensions).includes(queue))).toBe(true);
  });

  it('live in a schedule group of their own', () => {
    byDefault.template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'Flowmend' });
  });

  it('start runs through a Lambda that can start executions but not stop, describe or schedule anything', () => {
    const actions = actionsOf(statementsOf(cfn, fnId(cfn, 'ScheduledStart')));
    expect(actions).toContain('states:StartExecution');
    expect(actions.filter((a) => /StopExecution|DescribeExecution|scheduler:|iam:|lambda:/.test(a))).toEqual([]);
  });

  it('with scheduleMode rules, are EventBridge rules named with the stack prefix, allowed to invoke scheduled-start; the API manages those rules only', () => {
    expect(ofType(cfnSwitched, 'AWS::Scheduler::ScheduleGroup')).toHaveLength(0);
    expect(ofType(cfnSwitched, 'AWS::IAM::Role').filter(([id]) => id.startsWith('SchedulesSchedulerRole'))).toHaveLength(0);
    const target = fnId(cfnSwitched, 'ScheduledStart');
    const permission = ofType(cfnSwitched, 'AWS::Lambda::Permission').find(([, p]) => text(p.Properties?.FunctionName).includes(target));
    expect(permission?.[1].Properties).toMatchObject({ Principal: 'events.amazonaws.com', Action: 'lambda:InvokeFunction' });
    expect(text(permission?.[1].Properties?.SourceArn)).toContain(':rule/Flowmend-*');
    const apiStatements = statementsOf(cfnSwitched, fnId(cfnSwitched, 'Api'));
    expect(actionsOf(apiStatements).filter((a) => /^scheduler:|PassRole/.test(a))).toEqual([]);
    const ruleGrants = apiStatements.filter((s) => actionsOf([s]).some((a) => a.startsWith('events:')));
    expect(ruleGrants).toHaveLength(1);
    expect(actionsOf(ruleGrants).sort()).toEqual(['events:DeleteRule', 'events:DescribeRule', 'events:PutRule', 'events:PutTargets', 'events:RemoveTargets']);
    // Its own rules only (<stack>-schedule.<workflow>), which no rule CloudFormation names for the stack (the watcher's,
    // ScheduledWorkflow's: <stack>-<LogicalId>-<random>, never with a dot) can match.
    expect(text(ruleGrants[0]?.Resource)).toContain(':rule/Flowmend-schedule.*');
    expect(text(ruleGrants[0]?.Resource)).not.toContain(':rule/Flowmend-*');
    // Waits in rules mode (LocalStack fires no Scheduler schedule): no wake-up schedules, the engine may create none.
    expect(actionsOf(statementsOf(cfnSwitched, fnId(cfnSwitched, 'Advance'))).filter((a) => /^scheduler:|PassRole/.test(a))).toEqual([]);
    const defaultApiActions = actionsOf(statementsOf(cfn, fnId(cfn, 'Api')));
    expect(defaultApiActions.filter((a) => a.startsWith('events:'))).toEqual([]);
  });
});
