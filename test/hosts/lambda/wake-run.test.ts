import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerWakeups, wakeScheduleName } from '../../../functions/adapters/scheduler-wakeups.ts';
import { SfnRunLauncher } from '../../../functions/adapters/sfn-run-launcher.ts';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { WakeInputSchema } from '../../../functions/core/state-io.ts';
import { waitDepsFromEnv } from '../../../functions/hosts/lambda/wait-deps.ts';
import { makeWakeHandler } from '../../../functions/hosts/lambda/wake-run.ts';
import { LocalHost } from '../../../functions/hosts/local/local-host.ts';
import { type FakeScheduler, startFakeScheduler } from '../../support/fake-scheduler.ts';
import { type FakeSfn, startFakeSfn } from '../../support/fake-sfn.ts';

const TARGET = {
  groupName: 'Flowmend-waits',
  targetArn: 'arn:aws:lambda:us-east-1:123456789012:function:Flowmend-Wake',
  roleArn: 'arn:aws:iam::123456789012:role/Flowmend-WaitsSchedulerRole',
  deadLetterArn: 'arn:aws:sqs:us-east-1:123456789012:Flowmend-WatcherDeadLetters',
};
const MACHINES = {
  express: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-express',
  standard: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-standard',
};

let scheduler: FakeScheduler;
let sfn: FakeSfn;
beforeAll(async () => {
  [scheduler, sfn] = await Promise.all([startFakeScheduler(), startFakeSfn()]);
});
afterAll(() => Promise.all([scheduler.close(), sfn.close()]));

describe('wake-ups on AWS: the engine schedules them, the wake Lambda starts the execution that claims the run', () => {
  it('schedules a one-time at() schedule that deletes itself, once per wait; its firing starts a wake execution that continues the run', async () => {
    let now = Date.parse('2026-11-01T00:00:00.250Z');
    const store = new MemoryRunStore({ now: () => now });
    const host = new LocalHost({ store, now: () => now, wakeups: new SchedulerWakeups(TARGET, scheduler.client), validateDefinition: false });
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'day', type: 'wait', params: { seconds: 86_400 } },
        { id: 'after', type: 'transform', params: { input: 'later', expression: '$uppercase($)' } },
      ],
      edges: [{ from: 'day', to: 'after' }],
    });
    const paused = await host.start({ workflow, workflowName: 'w', params: {}, repairEnabled: false, maxRepairs: 0, runId: 'aws-wake-1' });
    expect(paused.status).toBe('waiting');
    const waitId = paused.waiting?.wait_id as string;
    const schedule = scheduler.schedules.get(`Flowmend-waits/${wakeScheduleName({ runId: 'aws-wake-1', waitId })}`) as unknown as Record<string, unknown>;
    // Rounded up to the second: a wake-up never comes before its deadline.
    expect(schedule).toMatchObject({
      ScheduleExpression: 'at(2026-11-02T00:00:01)',
      ScheduleExpressionTimezone: 'UTC',
      FlexibleTimeWindow: { Mode: 'OFF' },
      ActionAfterCompletion: 'DELETE',
      Target: { Arn: TARGET.targetArn, RoleArn: TARGET.roleArn, DeadLetterConfig: { Arn: TARGET.deadLetterArn } },
    });
    const input = JSON.parse((schedule.Target as { Input: string }).Input);
    expect(input).toEqual({ runId: 'aws-wake-1', waitId, mode: 'express' });
    // A retried Advance schedules the same wait again: a conflict, taken as done.
    await new SchedulerWakeups(TARGET, scheduler.client).schedule({ runId: 'aws-wake-1', waitId, at: now + 86_400_000, mode: 'express' });
    expect([...scheduler.schedules.keys()].filter((k) => k.startsWith('Flowmend-waits/'))).toHaveLength(1);

    // The schedule fires: the wake Lambda starts an execution named after a fresh owner, with a wake input.
    const launcher = new SfnRunLauncher({ sfn: sfn.client, store, stateMachines: MACHINES, now: () => now });
    const handled = await makeWakeHandler({ launcher, now: () => now })(input);
    const execution = sfn.executions.find((e) => e.name === handled.owner);
    expect(execution?.stateMachineArn).toBe(MACHINES.express);
    const wake = WakeInputSchema.parse(JSON.parse(execution?.input ?? '{}'));
    expect(wake).toMatchObject({ kind: 'wake', runId: 'aws-wake-1', waitId, owner: handled.owner });

    // That execution's first Advance (here on the local host, the same definition and handlers) continues the run.
    now += 86_400_000 + 1000;
    const done = await host.drive('aws-wake-1', wake.owner, undefined, { waitId, ...(wake.holder ? { holder: wake.holder } : {}) });
    expect(done).toMatchObject({ status: 'succeeded', result: { result: 'LATER' } });
    // A second delivery of the same wake-up starts an execution that ends idle: nothing runs twice.
    const again = await makeWakeHandler({ launcher, now: () => now })(input);
    const idle = await host.drive('aws-wake-1', again.owner, undefined, { waitId });
    expect(idle.metrics.nodes_executed).toBe(2);
  });

  it('refuses a wake-up event it cannot read, naming the field', async () => {
    const launcher = new SfnRunLauncher({ sfn: sfn.client, store: new MemoryRunStore(), stateMachines: MACHINES, now: Date.now });
    await expect(makeWakeHandler({ launcher, now: Date.now })({ runId: 'x' })).rejects.toThrow(/runId|waitId/);
  });

  it('reads the callback key and URL from the stack secret once, and only what the stack sets', async () => {
    let reads = 0;
    const services = async () => ({
      wakeups: () => ({ schedule: async () => {} }),
      readSecret: async (id: string) => {
        reads += 1;
        expect(id).toBe('Flowmend/callbacks');
        return JSON.stringify({ key: 'k'.repeat(64), url: 'https://abc.execute-api.us-east-1.amazonaws.com/v1/' });
      },
    });
    const deps = waitDepsFromEnv({ FLOWMEND_CALLBACK_SECRET_ID: 'Flowmend/callbacks' }, services);
    expect(deps.wakeups).toBeUndefined();
    const [a, b] = await Promise.all([deps.callbacks?.load(), deps.callbacks?.load()]);
    expect(a?.baseUrl).toBe('https://abc.execute-api.us-east-1.amazonaws.com/v1/');
    expect(b?.key.length).toBe(64);
    expect(reads).toBe(1);
    expect(() => waitDepsFromEnv({ FLOWMEND_WAKE_TARGET_ARN: 'not-an-arn' })).toThrow(/FLOWMEND_WAKE_TARGET_ARN/);
  });
});
