import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RulesScheduleSync } from '../../functions/adapters/eventbridge-rules.ts';
import { ConfigurationError, InvalidInputError } from '../../functions/core/errors.ts';
import type { Schedule } from '../../functions/core/registry-model.ts';
import { ScheduledStartEventSchema } from '../../functions/core/scheduled-start-event.ts';
import { type FakeEventBridge, startFakeEventBridge } from '../support/fake-eventbridge.ts';

const targetArn = 'arn:aws:lambda:us-east-1:123456789012:function:Flowmend-ScheduledStart';
const NOW = Date.UTC(2026, 10, 23, 12);
const nightly = (overrides: Partial<Schedule> = {}): Schedule => ({
  workflowName: 'nightly',
  expression: 'cron(0 2 * * ? *)',
  timezone: 'UTC',
  params: { day: 'today' },
  enabled: true,
  createdAt: NOW,
  updatedAt: NOW,
  ...overrides,
});

let fake: FakeEventBridge;
beforeAll(async () => {
  fake = await startFakeEventBridge();
});
afterAll(() => fake.close());

const setup = () => new RulesScheduleSync({ client: fake.client, prefix: 'Flowmend', targetArn });

describe('RulesScheduleSync', () => {
  it('puts a rule named with the stack prefix whose one target starts the workflow with the event time', async () => {
    await setup().upsert(nightly());
    const rule = fake.rules.get('Flowmend-schedule.nightly');
    expect(rule).toMatchObject({ ScheduleExpression: 'cron(0 2 * * ? *)', State: 'ENABLED' });
    const target = rule?.Targets.get('scheduled-start');
    expect(target?.Arn).toBe(targetArn);
    expect(target?.InputTransformer?.InputPathsMap).toEqual({ time: '$.time' });
    // What the Lambda gets once EventBridge fills in the event's time parses as a scheduled start.
    const fired = (target?.InputTransformer?.InputTemplate ?? '').replace('<time>', '2026-11-24T02:00:00Z');
    expect(ScheduledStartEventSchema.parse(JSON.parse(fired))).toEqual({
      workflowName: 'nightly',
      params: { day: 'today' },
      scheduledTime: '2026-11-24T02:00:00Z',
    });
  });

  it('overwrites the rule on a second upsert (disabling it here) and keeps one target', async () => {
    const sync = setup();
    await sync.upsert(nightly({ workflowName: 'twice' }));
    await sync.upsert(nightly({ workflowName: 'twice', expression: 'rate(1 hour)', enabled: false }));
    expect(fake.rules.get('Flowmend-schedule.twice')).toMatchObject({ ScheduleExpression: 'rate(1 hour)', State: 'DISABLED' });
    expect(fake.rules.get('Flowmend-schedule.twice')?.Targets.size).toBe(1);
  });

  it("refuses what rules cannot fire (at(...), a time zone) before calling EventBridge, and reports EventBridge's rejection as the caller's error", async () => {
    const sync = setup();
    for (const schedule of [
      nightly({ workflowName: 'once', expression: 'at(2027-01-01T00:00:00)' }),
      nightly({ workflowName: 'paris', timezone: 'Europe/Paris' }),
    ]) {
      const error = await sync.upsert(schedule).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidInputError);
      expect(String(error)).toMatch(/needs EventBridge Scheduler.*cron\(\.\.\.\) or rate\(\.\.\.\) in UTC only/);
    }
    expect(fake.calls.filter((c) => / (Flowmend-schedule\.once|Flowmend-schedule\.paris)$/.test(c))).toEqual([]);
    const error = await sync.upsert(nightly({ workflowName: 'bad', expression: 'rate(1 fortnight)' })).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(String(error)).toMatch(/EventBridge rejected the schedule of bad: Parameter ScheduleExpression is not valid/);
    expect(fake.rules.has('Flowmend-schedule.bad')).toBe(false);
  });

  it('removes the target then the rule; removing one that is not there is harmless', async () => {
    const sync = setup();
    await sync.upsert(nightly({ workflowName: 'gone' }));
    await sync.remove('gone');
    expect(fake.rules.has('Flowmend-schedule.gone')).toBe(false);
    await sync.remove('gone');
    expect(fake.calls.filter((c) => c.endsWith(' Flowmend-schedule.gone'))).toEqual([
      'PutRule Flowmend-schedule.gone',
      'PutTargets Flowmend-schedule.gone',
      'RemoveTargets Flowmend-schedule.gone',
      'DeleteRule Flowmend-schedule.gone',
      'RemoveTargets Flowmend-schedule.gone',
      'DeleteRule Flowmend-schedule.gone',
    ]);
  });

  it('keeps every rule name within 64 characters and under the prefix the Lambda permission allows', async () => {
    const sync = setup();
    const long = `w${'x'.repeat(63)}`;
    await sync.upsert(nightly({ workflowName: long }));
    const [name] = [...fake.rules.keys()].filter((n) => !/^Flowmend-schedule\.(nightly|twice)$/.test(n));
    expect(name).toMatch(/^Flowmend-schedule\.[0-9a-f]{12}$/);
    expect(sync.ruleName(long)).toBe(name);
    expect(() => new RulesScheduleSync({ client: fake.client, prefix: 'P'.repeat(43), targetArn })).toThrow(ConfigurationError);
  });
});
