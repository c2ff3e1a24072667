import { describe, expect, it } from 'vitest';
import { nextFireTimes, parseScheduleExpression } from '../../../functions/hosts/api/schedule-expression.ts';

const NOW = Date.parse('2026-11-23T16:00:00Z'); // a Monday
const next = (expression: string, timezone = 'UTC', count = 3): string[] => {
  const parsed = parseScheduleExpression(expression, timezone, NOW);
  if (!parsed.ok) throw new Error(parsed.message);
  return nextFireTimes(parsed.expression, NOW, count).map((t) => new Date(t).toISOString());
};
const refusal = (expression: string, timezone = 'UTC'): string => {
  const parsed = parseScheduleExpression(expression, timezone, NOW);
  return parsed.ok ? 'accepted' : parsed.message;
};

describe('parseScheduleExpression', () => {
  it('reads days of the week as AWS numbers them (SUN=1), in names, ranges, # and L', () => {
    expect(next('cron(0 9 ? * MON-FRI *)')).toEqual(['2026-11-24T09:00:00.000Z', '2026-11-25T09:00:00.000Z', '2026-11-26T09:00:00.000Z']);
    expect(next('cron(0 9 ? * 2-6 *)')).toEqual(next('cron(0 9 ? * MON-FRI *)'));
    // The third Friday of each month, and the last Monday.
    expect(next('cron(0 10 ? * 6#3 *)', 'UTC', 2)).toEqual(['2026-12-18T10:00:00.000Z', '2027-01-15T10:00:00.000Z']);
    expect(next('cron(0 10 ? * 2L *)', 'UTC', 2)).toEqual(['2026-11-30T10:00:00.000Z', '2026-12-28T10:00:00.000Z']);
  });

  it('honours the year field, the last day of the month and the time zone', () => {
    expect(next('cron(0 0 1 1 ? 2028)', 'UTC', 2)).toEqual(['2028-01-01T00:00:00.000Z']);
    expect(next('cron(0 12 L * ? *)', 'UTC', 2)).toEqual(['2026-11-30T12:00:00.000Z', '2026-12-31T12:00:00.000Z']);
    expect(next('cron(0 9 * * ? *)', 'America/New_York', 1)).toEqual(['2026-11-24T14:00:00.000Z']);
  });

  it('counts rates from when the schedule was set and fires at() once', () => {
    expect(next('rate(1 hour)')).toEqual(['2026-11-23T17:00:00.000Z', '2026-11-23T18:00:00.000Z', '2026-11-23T19:00:00.000Z']);
    expect(next('at(2027-01-01T09:00:00)', 'Europe/Paris')).toEqual(['2027-01-01T08:00:00.000Z']);
    expect(next('at(2020-01-01T09:00:00)')).toEqual([]);
  });

  it('says what is wrong with an expression EventBridge would refuse', () => {
    expect(refusal('cron(0 9 * * * *)')).toMatch(/exactly one of day-of-month and day-of-week must be "\?"/);
    expect(refusal('cron(0 9 ? * MON-FRI)')).toMatch(/needs 6 fields/);
    expect(refusal('rate(1 fortnight)')).toMatch(/minute\(s\), hour\(s\) or day\(s\)/);
    expect(refusal('rate(0 minutes)')).toMatch(/positive whole number/);
    expect(refusal('at(tomorrow)')).toMatch(/local date and time/);
    expect(refusal('every day')).toMatch(/cron\(\.\.\.\), rate\(\.\.\.\) or at\(\.\.\.\)/);
    expect(refusal('rate(5 minutes)', 'Nowhere/City')).toMatch(/IANA time zone/);
  });
});
