import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerRegistryStore } from '../../functions/adapters/eventbridge-schedules.ts';
import { InvalidInputError } from '../../functions/core/errors.ts';
import { MemoryRegistryStore } from '../../functions/core/memory-registry-store.ts';
import type { Schedule } from '../../functions/core/registry-model.ts';
import { ScheduledStartEventSchema } from '../../functions/core/scheduled-start-event.ts';
import { type FakeScheduler, startFakeScheduler } from '../support/fake-scheduler.ts';

const target = {
  groupName: 'Flowmend',
  targetArn: 'arn:aws:lambda:us-east-1:123456789012:function:Flowmend-ScheduledStart',
  roleArn: 'arn:aws:iam::123456789012:role/Flowmend-SchedulerRole',
};
const NOW = Date.UTC(2026, 10, 23, 12);
const workflow = { ir_version: '0.1.0', inputs: {}, nodes: [{ id: 'a', type: 'shell', params: { command: 'echo hi' } }], edges: [], outputs: {} };
const nightly = (overrides: Partial<Schedule> = {}): Schedule => ({
  workflowName: 'nightly',
  expression: 'cron(0 2 * * ? *)',
  timezone: 'Europe/Paris',
  params: { day: 'today' },
  enabled: true,
  createdAt: NOW,
  updatedAt: NOW,
  ...overrides,
});

let fake: FakeScheduler;
beforeAll(async () => {
  fake = await startFakeScheduler();
});
afterAll(() => fake.close());

const setup = () => {
  const inner = new MemoryRegistryStore();
  return { inner, store: new SchedulerRegistryStore(inner, { client: fake.client, ...target }) };
};

describe('SchedulerRegistryStore', () => {
  it('creates a Scheduler schedule in the API group that starts the registered workflow with its fire time, and records it', async () => {
    const { inner, store } = setup();
    await store.putWorkflow('nightly', workflow, NOW);
    await store.putSchedule(nightly());
    const created = fake.schedules.get('Flowmend/nightly');
    expect(created).toMatchObject({
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      State: 'ENABLED',
      Target: { Arn: target.targetArn, RoleArn: target.roleArn },
    });
    // What the Lambda will get once Scheduler fills in the time parses as a scheduled start.
    const fired = (created?.Target.Input ?? '').replace('<aws.scheduler.scheduled-time>', '2026-11-24T01:00:00Z');
    expect(ScheduledStartEventSchema.parse(JSON.parse(fired))).toEqual({ workflowName: 'nightly', params: { day: 'today' }, scheduledTime: '2026-11-24T01:00:00Z' });
    expect(await inner.getSchedule('nightly')).toMatchObject({ expression: 'cron(0 2 * * ? *)' });
  });

  it('replaces a schedule on a second PUT (disabling it here) instead of failing on the taken name', async () => {
    const { store } = setup();
    await store.putSchedule(nightly({ workflowName: 'twice' }));
    await store.putSchedule(nightly({ workflowName: 'twice', expression: 'rate(1 hour)', enabled: false }));
    expect(fake.schedules.get('Flowmend/twice')).toMatchObject({ ScheduleExpression: 'rate(1 hour)', State: 'DISABLED' });
    expect(fake.calls.filter((c) => c.endsWith(' twice'))).toEqual(['POST twice', 'POST twice', 'PUT twice']);
  });

  it("reports Scheduler's rejection of an expression as the caller's error and records nothing", async () => {
    const { inner, store } = setup();
    const error = await store.putSchedule(nightly({ workflowName: 'bad', expression: 'every day' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(String(error)).toMatch(/rejected the schedule of bad: Invalid Schedule Expression every day/);
    expect(await inner.getSchedule('bad')).toBeUndefined();
  });

  it('deletes the Scheduler schedule with the record, and with its workflow; deleting twice is harmless', async () => {
    const { store } = setup();
    await store.putWorkflow('gone', workflow, NOW);
    await store.putSchedule(nightly({ workflowName: 'gone' }));
    expect(await store.deleteSchedule('gone')).toBe(true);
    expect(fake.schedules.has('Flowmend/gone')).toBe(false);
    expect(await store.deleteSchedule('gone')).toBe(false);

    await store.putSchedule(nightly({ workflowName: 'gone' }));
    expect(await store.deleteWorkflow('gone')).toBe(true);
    expect(fake.schedules.has('Flowmend/gone')).toBe(false);
    expect(await store.getSchedule('gone')).toBeUndefined();
  });
});
