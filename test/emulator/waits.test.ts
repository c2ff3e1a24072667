import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { GetScheduleCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { beforeAll, describe, expect, it } from 'vitest';
import { wakeScheduleName } from '../../functions/adapters/scheduler-wakeups.ts';
import { EMULATOR_STACK_NAME } from '../../infra/emulator-stack.ts';
import { EMULATOR_CREDENTIALS, EMULATOR_REGION } from '../../scripts/emulator/emulator.ts';
import { callsNotAllowed, type DeployedStack, explain, type RunReport, scenarioDir, useDeployedStack } from './support/stack.ts';

/**
 * Waiting runs on the deployed stack (DESIGN 7b). The design: the execution ends with the run `waiting` in its
 * item, a one-time Scheduler `at()` schedule wakes it (the emulator fires those itself when due), callbacks
 * come unsigned to `POST /callbacks/{run}/{token}`, and approvals come signed to `POST /runs/{id}/approve`.
 */

type Waiting = RunReport & { waiting?: { kind: string; node_id?: string; wait_id: string; until?: string } };
type Events = { events: { type: string; node_id?: string; message?: string }[] };

const GROUP = `${EMULATOR_STACK_NAME}-waits`;
const ENDED = ['succeeded', 'failed', 'cancelled', 'interrupted'];

let stack: DeployedStack;
let scheduler: SchedulerClient;
let mark = 0;
const dir = scenarioDir('waits');

beforeAll(async () => {
  stack = await useDeployedStack();
  scheduler = new SchedulerClient({ endpoint: stack.endpoint, region: EMULATOR_REGION, credentials: EMULATOR_CREDENTIALS });
  mark = stack.mark();
});

/** A node whose side effect (a line in a file the Lambda shares with the test) counts how often it ran. */
const counted = (id: string, file: string) => ({ id, type: 'shell', params: { command: `echo ran >> ${file}; echo ${id}` } });
const lines = async (file: string) => (existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean).length : 0);
const events = async (runId: string) => (await stack.api.call<Events>('GET', `/runs/${runId}/events`)).events;
const waiting = (runId: string) => stack.waitFor(runId, ['waiting', ...ENDED]) as Promise<Waiting>;
const scheduleOf = (runId: string, waitId: string) => scheduler.send(new GetScheduleCommand({ GroupName: GROUP, Name: wakeScheduleName({ runId, waitId }) }));
const scheduleGone = (runId: string, waitId: string): Promise<boolean> =>
  scheduleOf(runId, waitId).then(
    () => false,
    () => true,
  );
/** Delivers a wait's wake-up now, as Scheduler would at its time (`/_emulator/fire-schedule`). */
const fireWakeUp = async (runId: string, waitId: string): Promise<void> => {
  const answer = await fetch(`${stack.endpoint}/_emulator/fire-schedule`, {
    method: 'POST',
    body: JSON.stringify({ group: GROUP, name: wakeScheduleName({ runId, waitId }), time: new Date().toISOString() }),
  });
  expect(answer.status, await answer.clone().text()).toBe(200);
};
/** The run's executions on the Express machine, by the names flowmend gives them (they carry the run id). */
const executionsOf = async (runId: string) =>
  ((await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.outputs.ExpressStateMachineArn }))).executions ?? []).filter((e) =>
    e.name?.includes(runId),
  );
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** The statuses of the run's executions once there are `count` of them and none is running. */
const executionsEnded = async (runId: string, count: number): Promise<string[]> => {
  for (let i = 0; i < 200; i += 1) {
    const statuses = (await executionsOf(runId)).map((e) => e.status ?? '');
    if (statuses.length >= count && !statuses.includes('RUNNING')) return statuses;
    await sleep(300);
  }
  return (await executionsOf(runId)).map((e) => e.status ?? '');
};

describe('waiting runs on the stack deployed to the AWS emulator', () => {
  it('a wait ends the execution with the run waiting; its one-time schedule wakes it when due, and the nodes run once', async () => {
    const before = join(dir, 'before.count');
    const after = join(dir, 'after.count');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [counted('before', before), { id: 'pause', type: 'wait', params: { seconds: 4 } }, counted('after', after)],
      edges: [
        { from: 'before', to: 'pause' },
        { from: 'pause', to: 'after' },
      ],
      outputs: { said: { source: '${after.stdout}' } },
    };
    const runId = await stack.start({ workflow });
    const paused = await waiting(runId);
    expect(paused, explain(paused)).toMatchObject({ status: 'waiting', waiting: { kind: 'time', node_id: 'pause' } });
    const waitId = paused.waiting?.wait_id as string;
    // Nothing holds the wait open: the execution that paused the run succeeded, and a schedule is due at the deadline.
    expect(await executionsEnded(runId, 1)).toEqual(['SUCCEEDED']);
    const schedule = await scheduleOf(runId, waitId);
    expect(schedule).toMatchObject({ ScheduleExpression: expect.stringMatching(/^at\(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\)$/), ActionAfterCompletion: 'DELETE' });
    expect(await lines(after)).toBe(0);

    const done = await stack.waitFor(runId, ENDED, 60_000);
    expect(done, explain(done)).toMatchObject({ status: 'succeeded', result: { said: 'after' } });
    expect([await lines(before), await lines(after)]).toEqual([1, 1]);
    expect((await events(runId)).filter((e) => e.type === 'run_woken')).toHaveLength(1);
    // The wake-up fired once and deleted itself.
    expect(await scheduleGone(runId, waitId)).toBe(true);
  });

  it('a long wait woken early does nothing, and cancel ends it; a wait cancelled before its wake-up comes stays cancelled, and nothing after it runs', async () => {
    const month = await stack.start({ workflow: { ir_version: '0.1.0', nodes: [{ id: 'month', type: 'wait', params: { seconds: 30 * 86_400 } }] } });
    const paused = await waiting(month);
    expect(Date.parse(paused.waiting?.until ?? '') - Date.now()).toBeGreaterThan(29 * 86_400_000);
    // Its schedule delivered now (as a duplicated or early delivery would be): the wake execution ends idle.
    await fireWakeUp(month, paused.waiting?.wait_id as string);
    expect(await executionsEnded(month, 2)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect((await stack.api.call<Waiting>('GET', `/runs/${month}`)).status).toBe('waiting');
    expect(await stack.api.call<{ status: string }>('POST', `/runs/${month}/cancel`, { body: {} })).toMatchObject({ status: 'cancelled' });
    expect((await stack.waitFor(month)).status).toBe('cancelled');

    const after = join(dir, 'cancelled.count');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'pause', type: 'wait', params: { seconds: 4 } }, counted('after', after)],
      edges: [{ from: 'pause', to: 'after' }],
    };
    const runId = await stack.start({ workflow });
    const short = await waiting(runId);
    expect(await stack.api.call<{ status: string }>('POST', `/runs/${runId}/cancel`, { body: {} })).toMatchObject({ status: 'cancelled' });
    // The emulator fires the schedule when due (then deletes it): the execution it starts finds the run cancelled.
    const waitId = short.waiting?.wait_id as string;
    for (let i = 0; i < 100; i += 1) {
      if (await scheduleGone(runId, waitId)) break;
      await sleep(300);
    }
    expect(await executionsEnded(runId, 2)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    const report = await stack.waitFor(runId);
    expect(report, explain(report)).toMatchObject({ status: 'cancelled' });
    expect(await lines(after)).toBe(0);
    expect((await events(runId)).some((e) => e.type === 'run_woken')).toBe(false);
  });

  it('takes an event on the callback URL an earlier node sent, unsigned and once; forged and reused tokens are refused; the token is in no log', async () => {
    const urlFile = join(dir, 'callback.url');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'send', type: 'shell', params: { command: `printf %s \${hook.callback_url} > ${urlFile}` } },
        { id: 'hook', type: 'wait-for-event', params: { timeout_s: 3600 } },
        { id: 'use', type: 'shell', params: { command: 'echo version=${hook.payload.version}' } },
      ],
      edges: [
        { from: 'send', to: 'hook' },
        { from: 'hook', to: 'use' },
      ],
      outputs: { said: { source: '${use.stdout}' } },
    };
    const runId = await stack.start({ workflow });
    expect(await waiting(runId)).toMatchObject({ status: 'waiting', waiting: { kind: 'event', node_id: 'hook' } });
    // The URL the stack gives (its callback secret holds the API's URL); the emulator serves the stage under its own path.
    const callback = await readFile(urlFile, 'utf8');
    const match = new RegExp(`/v1(/callbacks/${runId}/([A-Za-z0-9_-]{43}))$`).exec(callback);
    expect(match, callback).not.toBeNull();
    const [, path = '', token = ''] = match ?? [];
    const post = (to: string, body: unknown) =>
      fetch(`${stack.apiUrl}${to}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

    const forged = await post(`${path.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, { version: 'evil' });
    expect(forged.status).toBe(404);
    // A person's approval keeps IAM: unsigned, API Gateway refuses it before the app sees it.
    expect((await post(`/runs/${runId}/approve`, {})).status).toBe(403);
    const accepted = await post(path, { version: '2.4.1' });
    expect([accepted.status, await accepted.json()]).toEqual([202, { accepted: true, continued: true }]);
    const done = await stack.waitFor(runId, ENDED, 60_000);
    expect(done, explain(done)).toMatchObject({ status: 'succeeded', result: { said: 'version=2.4.1' } });
    expect((await post(path, { version: 'again' })).status).toBe(404);

    const logged = [...(await stack.functionLogs('Api')), ...(await stack.functionLogs('Advance'))].join('\n');
    expect(logged.length).toBeGreaterThan(0);
    expect(logged).not.toContain(token);
  });

  it('times an event wait out by its own schedule when nobody calls back: the node fails non-repairably and its error edge routes on', async () => {
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'hook', type: 'wait-for-event', params: { timeout_s: 3 } },
        { id: 'use', type: 'shell', params: { command: 'echo got an answer' } },
        { id: 'late', type: 'shell', params: { command: 'echo nobody answered' } },
      ],
      edges: [
        { from: 'hook', to: 'use' },
        { from: 'hook', to: 'late', action: 'error' },
      ],
      outputs: { said: { source: '${late.stdout}' } },
    };
    const runId = await stack.start({ workflow });
    expect(await waiting(runId)).toMatchObject({ status: 'waiting', waiting: { kind: 'event' } });
    const done = await stack.waitFor(runId, ENDED, 60_000);
    expect(done, explain(done)).toMatchObject({ status: 'succeeded', result: { said: 'nobody answered' } });
    const steps = (done.steps ?? []).map((s) => [s.node_id, s.status]);
    expect(steps).toEqual(expect.arrayContaining([['late', 'completed']]));
    expect(steps.some(([id]) => id === 'use')).toBe(false);
    expect((await events(runId)).find((e) => e.type === 'run_woken')?.message).toContain('timeout');
  });

  it('pauses at an approval gate with the resolved params; approved through the API it runs once, denied it fails DENIED, pre-approved it does not pause', async () => {
    const sent = join(dir, 'sent.count');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'draft', type: 'shell', params: { command: 'echo v2' } },
        { id: 'send', type: 'shell', approval: 'required', params: { command: `echo \${draft.stdout} >> ${sent}; echo sent` } },
      ],
      edges: [{ from: 'draft', to: 'send' }],
      outputs: { said: { source: '${send.stdout}' } },
    };
    const approved = await stack.start({ workflow });
    const paused = (await waiting(approved)) as Waiting & { waiting?: { preview?: Record<string, unknown> } };
    expect(paused, explain(paused)).toMatchObject({ status: 'waiting', waiting: { kind: 'approval', node_id: 'send' } });
    expect(String(paused.waiting?.preview?.command)).toContain("'v2'");
    const answer = await stack.api.call('POST', `/runs/${approved}/approve`, { body: { comment: 'ship it' }, headers: { 'x-flowmend-user': 'ada' } });
    expect(answer).toMatchObject({ answered: 'approved', continued: true });
    const done = await stack.waitFor(approved, ENDED, 60_000);
    expect(done, explain(done)).toMatchObject({ status: 'succeeded', result: { said: 'sent' } });
    expect(await lines(sent)).toBe(1);
    expect((await events(approved)).find((e) => e.type === 'wait_answered')?.message).toBe('approved by ada: ship it');

    const denied = await stack.start({ workflow });
    await waiting(denied);
    await stack.api.call('POST', `/runs/${denied}/approve`, { body: { deny: true } });
    const failed = await stack.waitFor(denied, ENDED, 60_000);
    expect(failed, explain(failed)).toMatchObject({ status: 'failed', errors: [{ node_id: 'send', code: 'DENIED', fixable: false }] });
    expect(await lines(sent)).toBe(1);

    const preApproved = await stack.start({ workflow, auto_approve: ['send'] });
    const ran = await stack.waitFor(preApproved, ENDED, 60_000);
    expect(ran, explain(ran)).toMatchObject({ status: 'succeeded', result: { said: 'sent' } });
    expect((await events(preApproved)).some((e) => e.type === 'run_waiting')).toBe(false);
    expect(await lines(sent)).toBe(2);
  });

  it('holds a repair for approval (repair_approval all): approved it is applied; rejected, a patch of ones own resumes the run', async () => {
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'fetch', type: 'shell', params: { command: 'echo octocat' } },
        { id: 'use', type: 'shell', params: { command: 'echo ${fetch.stdot}' } },
      ],
      edges: [{ from: 'fetch', to: 'use' }],
      outputs: { out: { source: '${use.stdout}' } },
    };
    const held = await stack.start({ workflow, repair_approval: 'all' });
    expect(await waiting(held)).toMatchObject({ status: 'waiting', waiting: { kind: 'repair-approval' } });
    await stack.api.call('POST', `/runs/${held}/approve`, { body: {} });
    const applied = await stack.waitFor(held, ENDED, 60_000);
    expect(applied, explain(applied)).toMatchObject({ status: 'succeeded', result: { out: 'octocat' }, repairs: [{ outcome: 'applied' }] });

    const rejected = await stack.start({ workflow, repair_approval: 'all' });
    await waiting(rejected);
    await stack.api.call('POST', `/runs/${rejected}/approve`, { body: { deny: true, comment: 'not that way' } });
    const failed = await stack.waitFor(rejected, ENDED, 60_000);
    expect(failed, explain(failed)).toMatchObject({ status: 'failed', errors: [{ code: 'REPAIR_REJECTED' }], repairs: [{ outcome: 'rejected' }] });
    const patched = { ...workflow, nodes: [workflow.nodes[0], { id: 'use', type: 'shell', params: { command: 'echo by hand ${fetch.stdout}' } }] };
    await stack.api.call('POST', `/runs/${rejected}/resume`, { body: { workflow: patched } });
    expect(await stack.waitFor(rejected, ['succeeded', 'failed'], 60_000)).toMatchObject({ status: 'succeeded', result: { out: 'by hand octocat' } });
  });

  it("makes only AWS calls its Lambdas' roles allow (the engine's CreateSchedule and PassRole, the wake Lambda's StartExecution)", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
