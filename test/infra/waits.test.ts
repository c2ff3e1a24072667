import { describe, expect, it } from 'vitest';
import type { Json } from '../support/cfn-asl.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { actionsOf, asCfn, logicalId, type Statement, statementsOf } from './stack-helpers.ts';

const { template } = synthFlowmend();
const cfn = asCfn(template);
const fnId = (prefix: string) => logicalId(cfn, 'AWS::Lambda::Function', prefix);
const text = (value: unknown) => JSON.stringify(value);
const withAction = (statements: Statement[], action: string) => statements.filter((s) => actionsOf([s]).includes(action));
const resources = (type: string) => Object.entries(cfn.Resources).filter(([, r]) => r.Type === type);

describe('waiting runs on AWS (DESIGN 7b)', () => {
  it('takes callbacks on POST /callbacks/{run}/{token} without IAM or an API key, at the API Lambda; every other method keeps its authorization', () => {
    const methods = resources('AWS::ApiGateway::Method').map(([, r]) => r);
    const open = methods.filter((m) => m.Properties?.AuthorizationType === 'NONE');
    expect(open).toHaveLength(1);
    expect(open[0]?.Properties).toMatchObject({ HttpMethod: 'POST', Integration: { Type: 'AWS_PROXY' } });
    expect(text(open[0]?.Properties?.Integration)).toContain(fnId('Api'));
    const paths = resources('AWS::ApiGateway::Resource').map(([, r]) => r.Properties?.PathPart);
    expect(paths).toEqual(expect.arrayContaining(['callbacks', '{run}', '{token}']));
    for (const m of methods.filter((m) => m !== open[0])) expect(m.Properties?.AuthorizationType).toBe('AWS_IAM');
  });

  it('lets the engine create schedules in the wake-up group only, pass the wake role to Scheduler only, and read the callback secret', () => {
    const advance = statementsOf(cfn, fnId('Advance'));
    const create = withAction(advance, 'scheduler:CreateSchedule');
    expect(create).toHaveLength(1);
    expect(actionsOf(create)).toEqual(['scheduler:CreateSchedule']);
    expect(text(create[0]?.Resource)).toContain(':schedule/Flowmend-waits/*');
    const pass = withAction(advance, 'iam:PassRole');
    expect(pass).toEqual([expect.objectContaining({ Condition: { StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } } })]);
    expect(text(pass[0]?.Resource)).toContain('WaitsSchedulerRole');
    const secret = withAction(advance, 'secretsmanager:GetSecretValue');
    expect(secret).toHaveLength(1);
    expect(text(secret[0]?.Resource)).toContain(':secret:Flowmend/callbacks-??????');
    // No delete, update or list: a wake-up deletes itself once it has fired.
    expect(actionsOf(advance).filter((a) => a.startsWith('scheduler:'))).toEqual(['scheduler:CreateSchedule']);
  });

  it('runs wake-ups as a role that may invoke the wake Lambda and write the dead-letter queue, and nothing else', () => {
    const [roleId] = resources('AWS::IAM::Role').find(([id]) => id.startsWith('WaitsSchedulerRole')) ?? [];
    const role = cfn.Resources[roleId as string];
    expect(text(role?.Properties?.AssumeRolePolicyDocument)).toContain('scheduler.amazonaws.com');
    expect(text(role?.Properties?.AssumeRolePolicyDocument)).toContain('aws:SourceAccount');
    const statements = resources('AWS::IAM::Policy')
      .filter(([, p]) => text(p.Properties?.Roles).includes(roleId as string))
      .flatMap(([, p]) => (p.Properties?.PolicyDocument as { Statement: Statement[] } | undefined)?.Statement ?? []);
    expect(actionsOf(statements).sort()).toEqual(['lambda:InvokeFunction', 'sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'].sort());
    expect(text(withAction(statements, 'lambda:InvokeFunction')[0]?.Resource)).toContain(fnId('Wake'));
    template.hasResourceProperties('AWS::Scheduler::ScheduleGroup', { Name: 'Flowmend-waits' });
  });

  it('gives the wake Lambda StartExecution on the two machines (by name) and no table, bucket or secret', () => {
    const wake = statementsOf(cfn, fnId('Wake'));
    const start = withAction(wake, 'states:StartExecution');
    expect(start).toHaveLength(1);
    expect(text(start[0]?.Resource)).toContain(':stateMachine:Flowmend-express');
    expect(text(start[0]?.Resource)).toContain(':stateMachine:Flowmend-standard');
    expect(actionsOf(wake).filter((a) => /^(dynamodb|s3|secretsmanager|scheduler):/.test(a))).toEqual([]);
    const props = cfn.Resources[fnId('Wake')]?.Properties as { DeadLetterConfig?: Json } | undefined;
    expect(props?.DeadLetterConfig).toBeDefined();
  });

  it('keeps the callback key in a generated secret beside the API URL, and tells the engine where its wake-ups go', () => {
    template.hasResourceProperties('AWS::SecretsManager::Secret', {
      Name: 'Flowmend/callbacks',
      GenerateSecretString: { GenerateStringKey: 'key', PasswordLength: 64, ExcludePunctuation: true },
    });
    const env = (cfn.Resources[fnId('Advance')]?.Properties as { Environment?: { Variables: Record<string, Json> } } | undefined)?.Environment?.Variables ?? {};
    expect(env.FLOWMEND_WAKE_GROUP).toBe('Flowmend-waits');
    expect(env.FLOWMEND_CALLBACK_SECRET_ID).toBe('Flowmend/callbacks');
    expect(text(env.FLOWMEND_WAKE_TARGET_ARN)).toContain(fnId('Wake'));
    expect(text(env.FLOWMEND_WAKE_DLQ_ARN)).toContain('WatcherDeadLetters');
  });

  it('wakes waits by Scheduler unless told not to: none by default in rules mode (LocalStack), Scheduler when asked (the emulator stack)', () => {
    const wakeups = (props: Parameters<typeof synthFlowmend>[0]) => {
      const synthesized = asCfn(synthFlowmend(props).template);
      const engine = logicalId(synthesized, 'AWS::Lambda::Function', 'Advance');
      const env =
        (synthesized.Resources[engine]?.Properties as { Environment?: { Variables: Record<string, Json> } } | undefined)?.Environment?.Variables ?? {};
      return {
        grants: actionsOf(statementsOf(synthesized, engine)).filter((a) => a.startsWith('scheduler:')),
        group: Object.values(synthesized.Resources).some((r) => r.Type === 'AWS::Scheduler::ScheduleGroup' && r.Properties?.Name === 'Flowmend-waits'),
        env: env.FLOWMEND_WAKE_GROUP,
        secret: env.FLOWMEND_CALLBACK_SECRET_ID,
      };
    };
    const bySchedule = { grants: ['scheduler:CreateSchedule'], group: true, env: 'Flowmend-waits', secret: 'Flowmend/callbacks' };
    const none = { grants: [], group: false, env: undefined, secret: 'Flowmend/callbacks' };
    expect(wakeups({ scheduleMode: 'rules' })).toEqual(none);
    expect(wakeups({ scheduleMode: 'rules', waitWakeups: 'scheduler' })).toEqual(bySchedule);
    expect(wakeups({ waitWakeups: 'none' })).toEqual(none);
  });
});
