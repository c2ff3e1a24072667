import { Cron } from 'croner';

/**
 * EventBridge Scheduler's expressions (`cron(...)`, `rate(...)`, `at(...)`), read the way AWS reads them.
 * Cron is handed to croner, which understands the 6-field cron with `?`, `L`, `W`, `#` and years once
 * a seconds field is put in front and the days of the week are renumbered (AWS counts SUN as 1, croner as 0).
 */
export type ScheduleExpression = { kind: 'cron'; cron: Cron } | { kind: 'rate'; periodMs: number; anchor: number } | { kind: 'at'; at: number };

export type ParsedExpression = { ok: true; expression: ScheduleExpression } | { ok: false; message: string };

const RATE_UNITS: Record<string, number> = { minute: 60_000, minutes: 60_000, hour: 3_600_000, hours: 3_600_000, day: 86_400_000, days: 86_400_000 };
const EXAMPLES = 'e.g. "cron(0 9 ? * MON-FRI *)", "rate(5 minutes)" or "at(2027-01-01T09:00:00)"';

/** AWS numbers days of the week 1-7 from Sunday; croner 0-6. A number after `#` or `/` is a count, not a day. */
const renumberDaysOfWeek = (field: string): string => field.replace(/(?<![#/\d])([1-7])(?!\d)/g, (_, day: string) => String(Number(day) - 1));

export const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
};

/** Parses an expression in `timezone`; a rate counts its periods from `anchor` (when the schedule was set). */
export const parseScheduleExpression = (text: string, timezone: string, anchor: number): ParsedExpression => {
  if (!isTimeZone(timezone)) return { ok: false, message: `timezone '${timezone}' is not an IANA time zone, e.g. "UTC" or "Europe/Paris"` };
  const match = /^(cron|rate|at)\((.*)\)$/s.exec(text.trim());
  if (!match) return { ok: false, message: `expression '${text}' is not one of cron(...), rate(...) or at(...); ${EXAMPLES}` };
  const [, kind, body = ''] = match;
  if (kind === 'rate') {
    const rate = /^\s*(\d+)\s+([a-z]+)\s*$/.exec(body);
    const unit = rate?.[2] === undefined ? undefined : RATE_UNITS[rate[2]];
    const value = Number(rate?.[1]);
    if (!rate || unit === undefined || !(value > 0))
      return { ok: false, message: `rate expression '${text}' needs a positive whole number and minute(s), hour(s) or day(s), e.g. "rate(5 minutes)"` };
    return { ok: true, expression: { kind: 'rate', periodMs: value * unit, anchor } };
  }
  if (kind === 'at') {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(body.trim()))
      return { ok: false, message: `at expression '${text}' needs a local date and time, e.g. "at(2027-01-01T09:00:00)"` };
    try {
      const at = new Cron(body.trim(), { paused: true, timezone }).nextRun(new Date(0));
      if (!at) return { ok: false, message: `at expression '${text}' names no time` };
      return { ok: true, expression: { kind: 'at', at: at.getTime() } };
    } catch (error) {
      return { ok: false, message: `at expression '${text}': ${(error as Error).message}` };
    }
  }
  const fields = body.trim().split(/\s+/);
  if (fields.length !== 6)
    return {
      ok: false,
      message: `cron expression '${text}' needs 6 fields (minutes hours day-of-month month day-of-week year), got ${fields.length}; ${EXAMPLES}`,
    };
  const [minutes, hours, dom, month, dow, year] = fields as [string, string, string, string, string, string];
  if ((dom === '?') === (dow === '?'))
    return { ok: false, message: `cron expression '${text}': exactly one of day-of-month and day-of-week must be "?" (as EventBridge requires)` };
  try {
    const cron = new Cron([0, minutes, hours, dom, month, renumberDaysOfWeek(dow), year].join(' '), { paused: true, timezone });
    return { ok: true, expression: { kind: 'cron', cron } };
  } catch (error) {
    return { ok: false, message: `cron expression '${text}': ${(error as Error).message}` };
  }
};

/** The first fire time strictly after `after`, or undefined when there is none (an `at` in the past). */
export const nextFireAfter = (expression: ScheduleExpression, after: number): number | undefined => {
  switch (expression.kind) {
    case 'cron':
      return expression.cron.nextRun(new Date(after))?.getTime();
    case 'rate': {
      const periods = Math.floor((after - expression.anchor) / expression.periodMs) + 1;
      return expression.anchor + Math.max(1, periods) * expression.periodMs;
    }
    case 'at':
      return expression.at > after ? expression.at : undefined;
  }
};

/** Up to `count` fire times after `after`, in order. */
export const nextFireTimes = (expression: ScheduleExpression, after: number, count: number): number[] => {
  const times: number[] = [];
  let cursor = after;
  while (times.length < count) {
    const next = nextFireAfter(expression, cursor);
    if (next === undefined) break;
    times.push(next);
    cursor = next;
  }
  return times;
};
