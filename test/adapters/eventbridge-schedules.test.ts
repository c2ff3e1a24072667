import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchedulerScheduleSync } from '../../functions/adapters/eventbridge-schedules.ts';
import { InvalidInputError } from '../../functions/core/errors.ts';
import type { Schedule } from '../../functions/core/registry-model.ts';
import { ScheduledStartEventSchema } from '../../functions/core/scheduled-start-event.ts';
import { type FakeScheduler, startFakeScheduler } from '../support/fake-scheduler.ts';

const target = {
  groupName: 'Flowmend',
  targetArn: 'arn:aws:lambda:us-east-1:123456789012:function:Flowmend-ScheduledStart',
  roleArn: 'arn:aws:iam::123456789012:role/Flowmend-SchedulerRole',
};
const NOW = Date.UTC(2026, 10, 23, 12);
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

const setup = () => ({ sync: new SchedulerScheduleSync({ client: fake.client, ...target }) });

describe('SchedulerScheduleSync', () => {
  it('creates a Scheduler schedule in the API group that starts the registered workflow with its fire time', async () => {
    const { sync } = setup();
    await sync.upsert(nightly());
    const created = fake.schedules.get('Flowmend/nightly');
    expect(created).toMatchObject({
      ScheduleExpression: 'cron(0 2 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      State: 'ENABLED',
      Target: { Arn: target.targetArn, RoleArn: target.roleArn },
    });
    // What the Lambda gets once Scheduler fills in the time parses as a scheduled start.
    const fired = (created?.Target.Input ?? '').replace('<aws.scheduler.scheduled-time>', '2026-11-24T01:00:00Z');
    expect(ScheduledStartEventSchema.parse(JSON.parse(fired))).toEqual({
      workflowName: 'nightly',
      params: { day: 'today' },
      scheduledTime: '2026-11-24T01:00:00Z',
    });
  });

  it('replaces a schedule on a second upsert (disabling it here) instead of failing on the taken name', async () => {
    const { sync } = setup();
    await sync.upsert(nightly({ workflowName: 'twice' }));
    await sync.upsert(nightly({ workflowName: 'twice', expression: 'rate(1 hour)', enabled: false }));
    expect(fake.schedules.get('Flowmend/twice')).toMatchObject({ ScheduleExpression: 'rate(1 hour)', State: 'DISABLED' });
    expect(fake.calls.filter((c) => c.endsWith(' twice'))).toEqual(['POST twice', 'POST twice', 'PUT twice']);
  });

  it("reports Scheduler's rejection of an expression as the caller's error, naming the workflow", async () => {
    const { sync } = setup();
    const error = await sync.upsert(nightly({ workflowName: 'bad', expression: 'every day' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(String(error)).toMatch(/rejected the schedule of bad: Invalid Schedule Expression every day/);
    expect(fake.schedules.has('Flowmend/bad')).toBe(false);
  });

  it('removes a schedule; removing one that is not there is harmless', async () => {
    const { sync } = setup();
    await sync.upsert(nightly({ workflowName: 'gone' }));
    await sync.remove('gone');
    expect(fake.schedules.has('Flowmend/gone')).toBe(false);
    await sync.remove('gone');
    expect(fake.calls.filter((c) => c.endsWith(' gone'))).toEqual(['POST gone', 'DELETE gone', 'DELETE gone']);
  });
});
