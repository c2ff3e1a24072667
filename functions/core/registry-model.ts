import { WorkflowSchema } from './ir.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { RunIdSchema } from './run-model.ts';
import * as z from './zod.ts';

/** A registered workflow's name: it appears in URLs, schedule names and DynamoDB keys. */
export const WorkflowNameSchema = z
  .string()
  .check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'a workflow name is 1-64 letters, digits, _, . or -, starting with a letter or digit'));
export type WorkflowName = z.infer<typeof WorkflowNameSchema>;

/** One immutable version of a registered workflow; every PUT makes the next one. */
export const WorkflowVersionSchema = builtOnFirstUse(() =>
  z.object({
    name: WorkflowNameSchema,
    version: z.int().check(z.positive()),
    workflow: WorkflowSchema,
    createdAt: z.number(),
  }),
);
export type WorkflowVersion = z.infer<typeof WorkflowVersionSchema>;

/** What `GET /workflows` lists: the latest version of each name. */
export const WorkflowSummarySchema = builtOnFirstUse(() =>
  z.object({
    name: WorkflowNameSchema,
    latestVersion: z.int().check(z.positive()),
    updatedAt: z.number(),
    description: z.optional(z.string()),
  }),
);
export type WorkflowSummary = z.infer<typeof WorkflowSummarySchema>;

/** A workflow's one schedule (EventBridge Scheduler's shape: expression, time zone, payload, state). */
export const ScheduleSchema = builtOnFirstUse(() =>
  z.object({
    workflowName: WorkflowNameSchema,
    /** `cron(...)`, `rate(...)` or `at(...)` as EventBridge Scheduler writes them. */
    expression: z.string().check(z.minLength(1)),
    /** IANA time zone the expression is read in. */
    timezone: z.string().check(z.minLength(1)),
    params: z.record(z.string(), z.unknown()),
    enabled: z.boolean(),
    createdAt: z.number(),
    updatedAt: z.number(),
  }),
);
export type Schedule = z.infer<typeof ScheduleSchema>;

/** An `Idempotency-Key` and the run the first request with it started. */
export const IdempotencyRecordSchema = builtOnFirstUse(() =>
  z.object({
    key: z.string().check(z.minLength(1), z.maxLength(255)),
    runId: RunIdSchema,
    createdAt: z.number(),
    expiresAt: z.number(),
  }),
);
export type IdempotencyRecord = z.infer<typeof IdempotencyRecordSchema>;

/** How long an idempotency key is kept at least (the issue asks for 24 h). */
export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;
