import { RunIdSchema, RunStatusSchema, WorkflowNameSchema } from '../../core/index.ts';
import * as z from '../../core/zod.ts';

const ModeSchema = z.enum(['express', 'standard'], { error: 'mode is "express" or "standard"' });
const ParamsSchema = z.record(z.string(), z.unknown(), { error: 'params is an object of input values, e.g. {"name": "Ada"}' });
const MaxRepairsSchema = z.int().check(z.gte(0), z.lte(20));
const RepairApprovalBodySchema = z.enum(['none', 'llm', 'all'], { error: 'repair_approval is "none", "llm" (an LLM\'s patch waits for approval) or "all"' });
/** A workflow as JSON, or the text of a pflow `.pflow.md` file. */
const WorkflowObjectSchema = z.union([z.record(z.string(), z.unknown()), z.string()], {
  error: 'workflow is a workflow object (the JSON of a workflow file) or the text of a .pflow.md file',
});

/** `POST /runs`: an inline workflow or a registered one, its inputs and the run's options. */
export const StartRunBodySchema = z
  .strictObject({
    workflow: z.optional(WorkflowObjectSchema),
    workflow_name: z.optional(WorkflowNameSchema),
    /** What runs of an inline workflow are listed under (the CLI sends the file's name). */
    name: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
    version: z.optional(z.int().check(z.positive())),
    params: z._default(ParamsSchema, {}),
    repair: z._default(z.boolean(), true),
    max_repairs: z.optional(MaxRepairsSchema),
    /** pflow's --no-cache: the run reuses no memo-cache entry (it still writes them). */
    no_cache: z.optional(z.boolean()),
    mode: z.optional(ModeSchema),
    /** Gated nodes approved in advance for this run (each must have `"approval": "required"`). */
    auto_approve: z.optional(z.array(z.string().check(z.maxLength(200))).check(z.maxLength(100))),
    repair_approval: z.optional(RepairApprovalBodySchema),
  })
  .check(
    z.superRefine((body, ctx) => {
      if ((body.workflow === undefined) === (body.workflow_name === undefined)) {
        ctx.addIssue({ code: 'custom', path: ['workflow'], message: 'give exactly one of "workflow" (inline) or "workflow_name" (registered)' });
      }
      if (body.name !== undefined && body.workflow_name !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['name'], message: '"name" labels an inline workflow; a registered one is listed under "workflow_name"' });
      }
      if (body.version !== undefined && body.workflow_name === undefined) {
        ctx.addIssue({ code: 'custom', path: ['version'], message: '"version" picks a version of "workflow_name"; it needs "workflow_name"' });
      }
    }),
  );
export type StartRunBody = z.infer<typeof StartRunBodySchema>;

/** `POST /runs` with a `.pflow.md` body: the run's options travel in the query string (`params` as JSON). */
export const MarkdownRunQuerySchema = z.strictObject({
  name: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  params: z.optional(z.string().check(z.maxLength(100_000))),
  repair: z.optional(z.enum(['true', 'false'], { error: 'repair is true or false' })),
  max_repairs: z.optional(z.coerce.number().check(z.int(), z.gte(0), z.lte(20))),
  no_cache: z.optional(z.enum(['true', 'false'], { error: 'no_cache is true or false' })),
  mode: z.optional(ModeSchema),
});

/** Printable ASCII, as Stripe and the IETF draft allow. */
export const IdempotencyKeySchema = z.string().check(z.regex(/^[\x21-\x7e]{1,255}$/, 'Idempotency-Key is 1-255 printable ASCII characters without spaces'));

export const ListRunsQuerySchema = z.strictObject({
  workflow: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  status: z.optional(RunStatusSchema),
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(100)), 20),
  cursor: z.optional(z.string().check(z.maxLength(500))),
  /** `children`: list workflow nodes' child runs beside top-level runs (by default they are only counted). */
  include: z.optional(z.enum(['children'], { error: 'include is `children` (list child runs too) or absent (top-level runs only)' })),
});

export const EventsQuerySchema = z.strictObject({
  after: z.optional(z.string().check(z.maxLength(100))),
  limit: z._default(z.coerce.number().check(z.int(), z.gte(1), z.lte(500)), 100),
  /** Long-poll: seconds to wait for a new event when there is none yet (0 answers at once). */
  wait: z._default(z.coerce.number().check(z.int(), z.gte(0), z.lte(20)), 0),
});

export const ResumeBodySchema = z.strictObject({
  workflow: z.optional(WorkflowObjectSchema),
  repair: z.optional(z.boolean()),
  max_repairs: z.optional(MaxRepairsSchema),
  repair_approval: z.optional(RepairApprovalBodySchema),
  /** true: the rest of the run reuses no memo-cache entry; false: it does again. */
  no_cache: z.optional(z.boolean()),
});
export type ResumeBody = z.infer<typeof ResumeBodySchema>;

export const ScheduleBodySchema = z.strictObject({
  expression: z.string().check(z.minLength(1), z.maxLength(256)),
  timezone: z._default(z.string().check(z.minLength(1), z.maxLength(64)), 'UTC'),
  params: z._default(ParamsSchema, {}),
  enabled: z._default(z.boolean(), true),
});

export const WorkflowQuerySchema = z.strictObject({ version: z.optional(z.coerce.number().check(z.int(), z.positive())) });
export const RunIdParamSchema = z.object({ id: RunIdSchema });
export const WorkflowNameParamSchema = z.object({ name: WorkflowNameSchema });

/** `GET /runs` cursor: the last run of the page, opaque to clients. */
export const RunsCursorSchema = z.pipe(
  z.pipe(
    z.string(),
    z.transform((text, ctx) => {
      try {
        return JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
      } catch {
        ctx.issues.push({ code: 'custom', message: 'cursor is the next_cursor of an earlier page', input: text });
        return z.NEVER;
      }
    }),
  ),
  z.object({ c: z.number(), r: z.string() }, { error: 'cursor is the next_cursor of an earlier page' }),
);
export const encodeRunsCursor = (createdAt: number, runId: string): string => Buffer.from(JSON.stringify({ c: createdAt, r: runId })).toString('base64url');
