import * as z from 'zod';
import { RunIdSchema, RunStatusSchema, WorkflowNameSchema } from '../../core/index.ts';

const ModeSchema = z.enum(['express', 'standard'], { error: 'mode is "express" or "standard"' });
const ParamsSchema = z.record(z.string(), z.unknown(), { error: 'params is an object of input values, e.g. {"name": "Ada"}' });
const MaxRepairsSchema = z.number().int().min(0).max(20);
const WorkflowObjectSchema = z.record(z.string(), z.unknown(), { error: 'workflow is a workflow object (the JSON of a workflow file)' });

/** `POST /runs`: an inline workflow or a registered one, its inputs and the run's options. */
export const StartRunBodySchema = z
  .strictObject({
    workflow: WorkflowObjectSchema.optional(),
    workflow_name: WorkflowNameSchema.optional(),
    /** What runs of an inline workflow are listed under (the CLI sends the file's name). */
    name: z.string().min(1).max(200).optional(),
    version: z.number().int().positive().optional(),
    params: ParamsSchema.default({}),
    repair: z.boolean().default(true),
    max_repairs: MaxRepairsSchema.optional(),
    mode: ModeSchema.optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.workflow === undefined) === (body.workflow_name === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['workflow'], message: 'give exactly one of "workflow" (inline) or "workflow_name" (registered)' });
    }
    if (body.name !== undefined && body.workflow_name !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['name'], message: '"name" labels an inline workflow; a registered one is listed under "workflow_name"' });
    }
    if (body.version !== undefined && body.workflow_name === undefined) {
      ctx.addIssue({ code: 'custom', path: ['version'], message: '"version" picks a version of "workflow_name"; it needs "workflow_name"' });
    }
  });
export type StartRunBody = z.infer<typeof StartRunBodySchema>;

/** Printable ASCII, as Stripe and the IETF draft allow. */
export const IdempotencyKeySchema = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key is 1-255 printable ASCII characters without spaces');

export const ListRunsQuerySchema = z.strictObject({
  workflow: z.string().min(1).max(200).optional(),
  status: RunStatusSchema.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(500).optional(),
  /** `children`: list workflow nodes' child runs beside top-level runs (by default they are only counted). */
  include: z.enum(['children'], { error: 'include is `children` (list child runs too) or absent (top-level runs only)' }).optional(),
});

export const EventsQuerySchema = z.strictObject({
  after: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** Long-poll: seconds to wait for a new event when there is none yet (0 answers at once). */
  wait: z.coerce.number().int().min(0).max(20).default(0),
});

export const ResumeBodySchema = z.strictObject({
  workflow: WorkflowObjectSchema.optional(),
  repair: z.boolean().optional(),
  max_repairs: MaxRepairsSchema.optional(),
});
export type ResumeBody = z.infer<typeof ResumeBodySchema>;

export const ScheduleBodySchema = z.strictObject({
  expression: z.string().min(1).max(256),
  timezone: z.string().min(1).max(64).default('UTC'),
  params: ParamsSchema.default({}),
  enabled: z.boolean().default(true),
});

export const WorkflowQuerySchema = z.strictObject({ version: z.coerce.number().int().positive().optional() });
export const RunIdParamSchema = z.object({ id: RunIdSchema });
export const WorkflowNameParamSchema = z.object({ name: WorkflowNameSchema });

/** `GET /runs` cursor: the last run of the page, opaque to clients. */
export const RunsCursorSchema = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'cursor is the next_cursor of an earlier page' });
      return z.NEVER;
    }
  })
  .pipe(z.object({ c: z.number(), r: z.string() }, { error: 'cursor is the next_cursor of an earlier page' }));
export const encodeRunsCursor = (createdAt: number, runId: string): string => Buffer.from(JSON.stringify({ c: createdAt, r: runId })).toString('base64url');
