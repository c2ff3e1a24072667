import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDynamoClient, type DynaliteServer, startDynalite } from '../../../functions/adapters/dynalite-server.ts';
import { ensureTable } from '../../../functions/adapters/table-schema.ts';
import { makeApiHandler } from '../../../functions/hosts/lambda/api.ts';
import { apiGatewayV1Event, lambdaContext } from '../../support/api-gateway-event.ts';
import { type FakeEventBridge, startFakeEventBridge } from '../../support/fake-eventbridge.ts';
import { type FakeScheduler, startFakeScheduler } from '../../support/fake-scheduler.ts';
import { type FakeSfn, startFakeSfn } from '../../support/fake-sfn.ts';

// The real Lambda entry points with the environment the stack gives them; every AWS service is a
// loopback peer reached through AWS_ENDPOINT_URL_<SERVICE>: DynamoDB (dynalite), Step Functions, Scheduler.
const machines = {
  express: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-express',
  standard: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-standard',
};
const scheduledStartArn = 'arn:aws:lambda:us-east-1:123456789012:function:Flowmend-ScheduledStart';
const workflow = {
  nodes: [{ id: 'hello', type: 'shell', params: { command: 'echo ${name}' } }],
  inputs: { name: { type: 'string', required: false, default: 'world' } },
};

let dynamo: DynaliteServer;
let sfn: FakeSfn;
let scheduler: FakeScheduler;
let events: FakeEventBridge;
let api: typeof import('../../../functions/hosts/lambda/api.ts').handler;
let scheduledStart: typeof import('../../../functions/hosts/lambda/scheduled-start.ts').handler;

beforeAll(async () => {
  [dynamo, sfn, scheduler, events] = await Promise.all([startDynalite(), startFakeSfn(), startFakeScheduler(), startFakeEventBridge()]);
  await ensureTable(createLocalDynamoClient(dynamo.endpoint), 'Flowmend-Runs');
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'x',
    AWS_SECRET_ACCESS_KEY: 'x',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SFN: sfn.endpoint,
    AWS_ENDPOINT_URL_SCHEDULER: scheduler.endpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: events.endpoint,
    TABLE_NAME: 'Flowmend-Runs',
    EXPRESS_STATE_MACHINE_ARN: machines.express,
    STANDARD_STATE_MACHINE_ARN: machines.standard,
    FLOWMEND_SCHEDULE_MODE: 'scheduler',
    FLOWMEND_SCHEDULE_NAME: 'Flowmend',
    FLOWMEND_SCHEDULE_TARGET_ARN: scheduledStartArn,
    FLOWMEND_SCHEDULER_ROLE_ARN: 'arn:aws:iam::123456789012:role/Flowmend-SchedulerRole',
  });
  api = (await import('../../../functions/hosts/lambda/api.ts')).handler;
  scheduledStart = (await import('../../../functions/hosts/lambda/scheduled-start.ts')).handler;
});
afterAll(async () => {
  await Promise.all([dynamo?.close(), sfn?.close(), scheduler?.close(), events?.close()]);
});

/** An API answer as the tests read it: any field, and the error shape of every 4xx/5xx. */
type ApiJson = Record<string, unknown> & { error: { code: string; message: string } };
const call = async (method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}) => {
  const response = await api(apiGatewayV1Event(method, path, options), lambdaContext);
  const headers = Object.fromEntries(Object.entries(response.multiValueHeaders ?? {}).map(([k, v]) => [k.toLowerCase(), String(v[0])]));
  return {
    status: response.statusCode,
    headers: { ...headers, ...response.headers },
    json: response.body ? (JSON.parse(response.body) as ApiJson) : undefined,
  };
};
const executionsOf = (runId: string) => sfn.executions.filter((e) => e.name.startsWith(`sfn-${runId}-`));

describe('API Lambda (API Gateway v1 proxy events through the real app)', () => {
  it('starts a run once per Idempotency-Key: the run in DynamoDB, one Express execution named after its owner', async () => {
    const post = () => call('POST', '/runs', { body: { workflow, params: { name: 'ada' } }, headers: { 'Idempotency-Key': 'deploy-42' } });
    const first = await post();
    expect(first.status).toBe(202);
    const runId = String(first.json?.run_id);
    const again = await post();
    expect(again.json).toMatchObject({ run_id: runId, replayed: true });
    expect(again.headers['idempotent-replayed']).toBe('true');

    const started = executionsOf(runId);
    expect(started).toHaveLength(1);
    expect(started[0]?.stateMachineArn).toBe(machines.express);
    expect(JSON.parse(started[0]?.input ?? '{}')).toMatchObject({ kind: 'start', runId, owner: started[0]?.name });

    const report = await call('GET', `/runs/${runId}`);
    expect(report.status).toBe(200);
    expect(report.json).toMatchObject({ run_id: runId, status: 'running' });
  });

  it('answers bad input with the error shape and a 4xx, and an unknown route with 404', async () => {
    const bad = await call('POST', '/runs', { body: { workflow, params: 'ada' } });
    expect(bad.status).toBe(400);
    expect(bad.json?.error).toMatchObject({ code: 'INVALID_REQUEST', message: expect.stringMatching(/params/) });
    const notJson = await call('POST', '/runs', { body: '{"workflow": ', headers: { 'Content-Type': 'application/json' } });
    expect(notJson.status).toBe(400);
    expect((await call('GET', '/nowhere')).status).toBe(404);
    expect((await call('GET', '/runs/no-such-run-1')).json?.error?.code).toBe('NOT_FOUND');
  });

  it('resumes a Standard run only once its execution is no longer running, as a new execution of the same run', async () => {
    const start = await call('POST', '/runs', { body: { workflow, mode: 'standard' } });
    const runId = String(start.json?.run_id);
    const [first] = executionsOf(runId);
    expect(first?.stateMachineArn).toBe(machines.standard);

    const busy = await call('POST', `/runs/${runId}/resume`);
    expect(busy.status).toBe(409);
    expect(busy.json?.error.message).toMatch(/still being run/);

    // The execution died without writing the run (a Lambda timeout, a deleted execution): DescribeExecution says so.
    if (first) first.status = 'FAILED';
    const resumed = await call('POST', `/runs/${runId}/resume`);
    expect(resumed.status).toBe(202);
    const after = executionsOf(runId);
    expect(after).toHaveLength(2);
    expect(after[1]).toMatchObject({ stateMachineArn: machines.standard, status: 'RUNNING' });
    expect(after[1]?.name).not.toBe(first?.name);
  });

  it('cancels a live Standard run: the run is cancelled, its execution stopped, and it can be resumed', async () => {
    const runId = String((await call('POST', '/runs', { body: { workflow, mode: 'standard' } })).json?.run_id);
    const cancelled = await call('POST', `/runs/${runId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.json).toMatchObject({ run_id: runId, status: 'cancelled' });
    expect(executionsOf(runId)[0]?.status).toBe('ABORTED');
    expect((await call('GET', `/runs/${runId}`)).json?.status).toBe('cancelled');
    expect((await call('POST', `/runs/${runId}/resume`)).status).toBe(202);
    expect(executionsOf(runId).map((e) => e.status)).toEqual(['ABORTED', 'RUNNING']);
  });

  it('mirrors a schedule put and deleted through the API as an EventBridge Scheduler schedule', async () => {
    expect((await call('PUT', '/workflows/nightly', { body: workflow })).status).toBe(201);
    const put = await call('PUT', '/workflows/nightly/schedule', {
      body: { expression: 'cron(0 2 * * ? *)', timezone: 'Europe/Paris', params: { name: 'night' } },
    });
    expect(put.status).toBe(201);
    expect(scheduler.schedules.get('Flowmend/nightly')).toMatchObject({
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      Target: { Arn: scheduledStartArn },
    });
    expect((await call('DELETE', '/workflows/nightly/schedule')).status).toBe(204);
    expect(scheduler.schedules.has('Flowmend/nightly')).toBe(false);
  });
});

describe('API Lambda in scheduleMode rules (LocalStack)', () => {
  it('mirrors a schedule put and deleted through the API as an EventBridge rule of its own (<stack>-schedule.<workflow>)', async () => {
    const { apiDepsFromEnv } = await import('../../../functions/hosts/lambda/api-deps.ts');
    const { FLOWMEND_SCHEDULER_ROLE_ARN: _role, ...stackEnv } = process.env;
    const rulesApi = makeApiHandler(apiDepsFromEnv({ ...stackEnv, FLOWMEND_SCHEDULE_MODE: 'rules' }));
    const rulesCall = async (method: string, path: string, body?: unknown) =>
      (await rulesApi(apiGatewayV1Event(method, path, { body }), lambdaContext)).statusCode;
    expect(await rulesCall('PUT', '/workflows/ruled', workflow)).toBe(201);
    expect(await rulesCall('PUT', '/workflows/ruled/schedule', { expression: 'rate(5 minutes)', params: { name: 'ruled' } })).toBe(201);
    const rule = events.rules.get('Flowmend-schedule.ruled');
    expect(rule).toMatchObject({ ScheduleExpression: 'rate(5 minutes)', State: 'ENABLED' });
    expect(rule?.Targets.get('scheduled-start')?.Arn).toBe(scheduledStartArn);
    expect(scheduler.schedules.has('Flowmend/ruled')).toBe(false);
    // Rules cannot read a time zone: the API says so with a 4xx instead of a rule that fires at the wrong hour.
    expect(await rulesCall('PUT', '/workflows/ruled/schedule', { expression: 'cron(0 2 * * ? *)', timezone: 'Europe/Paris' })).toBe(422);
    const kept = await rulesApi(apiGatewayV1Event('GET', '/workflows/ruled/schedule', {}), lambdaContext);
    expect(JSON.parse(kept.body)).toMatchObject({ expression: 'rate(5 minutes)', timezone: 'UTC' });
    expect(events.rules.get('Flowmend-schedule.ruled')?.ScheduleExpression).toBe('rate(5 minutes)');
    expect(await rulesCall('DELETE', '/workflows/ruled/schedule')).toBe(204);
    expect(events.rules.has('Flowmend-schedule.ruled')).toBe(false);
  });
});

describe('scheduled-start Lambda', () => {
  it('starts one run of the registered workflow per fire time, however often the event is delivered', async () => {
    await call('PUT', '/workflows/hourly', { body: workflow });
    const fire = { workflowName: 'hourly', params: { name: 'tick' }, scheduledTime: '2026-11-23T17:00:00Z' };
    const first = await scheduledStart(fire);
    const again = await scheduledStart(fire);
    expect(first.replayed).toBe(false);
    expect(again).toMatchObject({ runId: first.runId, replayed: true });
    expect(executionsOf(first.runId)).toHaveLength(1);
    const next = await scheduledStart({ ...fire, scheduledTime: '2026-11-23T18:00:00Z' });
    expect(next.runId).not.toBe(first.runId);
    const report = (await call('GET', `/runs/${first.runId}`)).json;
    expect(report).toMatchObject({ workflow: 'hourly' });
  });

  it('registers a workflow kept as code under its name when it changed, and runs that version', async () => {
    const inline = { nodes: [{ id: 'a', type: 'shell', params: { command: 'echo as-code' } }] };
    const fire = { workflowName: 'as-code', workflow: inline, scheduledTime: '2026-11-23T17:00:00Z' };
    expect((await scheduledStart(fire)).workflowVersion).toBe(1);
    expect((await scheduledStart({ ...fire, scheduledTime: '2026-11-23T18:00:00Z' })).workflowVersion).toBe(1);
    const changed = { nodes: [{ id: 'a', type: 'shell', params: { command: 'echo as-code v2' } }] };
    expect((await scheduledStart({ ...fire, workflow: changed, scheduledTime: '2026-11-23T19:00:00Z' })).workflowVersion).toBe(2);
  });

  it('rejects an event that is not a scheduled start, naming the field', async () => {
    await expect(scheduledStart({ workflowName: 'hourly', scheduledTime: 'yesterday' })).rejects.toThrow(/scheduledTime/);
  });
});
