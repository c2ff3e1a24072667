import { builtOnFirstUse } from './lazy-schema.ts';
import * as z from './zod.ts';

/**
 * What a schedule sends to the scheduled-start Lambda: EventBridge Scheduler fills `scheduledTime`
 * from `<aws.scheduler.scheduled-time>`, an EventBridge rule from the event's `time`. The same
 * scheduled time always makes the same idempotency key, so a re-delivered event starts one run.
 */
export const ScheduledStartEventSchema = builtOnFirstUse(() =>
  z.strictObject({
    workflowName: z.string().check(z.minLength(1), z.maxLength(64)),
    /** An inline workflow (schedules kept as code); without it, the registered workflow of that name. */
    workflow: z.optional(z.unknown()),
    /** A registered version; the latest when absent. */
    version: z.optional(z.int().check(z.positive())),
    params: z._default(z.record(z.string(), z.unknown()), {}),
    scheduledTime: z.iso.datetime({ offset: true }),
    /** A W3C traceparent the schedule's target input carries: the run joins that trace (else it starts one when traces are exported). */
    traceparent: z.optional(z.string().check(z.maxLength(256))),
  }),
);
export type ScheduledStartEvent = z.infer<typeof ScheduledStartEventSchema>;

/** The placeholder EventBridge Scheduler replaces with the time a schedule fired for (ISO 8601, UTC). */
export const SCHEDULER_TIME_PLACEHOLDER = '<aws.scheduler.scheduled-time>';

/** One run per schedule and fire time. */
export const scheduledIdempotencyKey = (event: Pick<ScheduledStartEvent, 'workflowName' | 'scheduledTime'>): string =>
  `schedule:${event.workflowName}:${new Date(event.scheduledTime).toISOString()}`;

/** EventBridge Scheduler's expression syntax; EventBridge rules accept only the first two. */
export const SCHEDULE_EXPRESSION = /^(cron\([^()]+\)|rate\(\d+ (minute|minutes|hour|hours|day|days)\)|at\(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\))$/;
