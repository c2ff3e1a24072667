import * as z from '../../../core/zod.ts';

/**
 * The API's answers as the page uses them. Parsed loosely (unknown keys pass) so a newer API with
 * more fields still works; a missing field the page needs is a clear error, not a blank page.
 */
const CategorySchema = z.string();

const ErrorEntrySchema = z.object({ node_id: z.optional(z.string()), category: CategorySchema, code: z.string(), message: z.string() });

const ViewNodeSchema = z.object({
  id: z.string(),
  type: z.string(),
  status: z.string(),
  visits: z.number(),
  seq: z.optional(z.number()),
  action: z.optional(z.string()),
  duration_ms: z.optional(z.number()),
  total_duration_ms: z.number(),
  outputs: z.optional(z.unknown()),
  error: z.optional(z.object({ code: z.string(), message: z.string(), category: z.optional(CategorySchema) })),
  repaired: z.boolean(),
  child_runs: z.optional(z.array(z.string())),
});
export type ViewNode = z.infer<typeof ViewNodeSchema>;

const ViewEdgeSchema = z.object({ from: z.string(), to: z.string(), action: z.string(), taken: z.number() });
export type ViewEdge = z.infer<typeof ViewEdgeSchema>;

const ViewVersionSchema = z.object({
  version: z.number(),
  source: z.string(),
  reason: z.string(),
  created_at: z.string(),
  nodes_changed: z.array(z.string()),
  diff: z.array(z.string()),
  tokens: z.object({ input: z.number(), output: z.number() }),
  cost_usd: z.number(),
  state: z.optional(z.string()),
});
export type ViewVersion = z.infer<typeof ViewVersionSchema>;

/** What a waiting run waits for (the report's `waiting`): a gate's params, or a held repair's proposal. */
const WaitSchema = z.object({
  kind: z.string(),
  wait_id: z.string(),
  node_id: z.optional(z.string()),
  since: z.string(),
  until: z.optional(z.string()),
  answer: z.optional(z.object({ outcome: z.string(), at: z.string(), by: z.optional(z.string()) })),
  preview: z.optional(z.record(z.string(), z.unknown())),
  repair: z.optional(
    z.object({
      version: z.optional(z.number()),
      source: z.optional(z.string()),
      model: z.optional(z.string()),
      reason: z.string(),
      diff: z.array(z.string()),
      tokens: z.object({ input: z.number(), output: z.number() }),
      cost_usd: z.number(),
    }),
  ),
  /** A wait of flow control: the key, and where the run stands (core/waits/wait-model.ts `WaitFlow`). */
  flow: z.optional(
    z.object({
      key: z.string(),
      scope: z.optional(z.enum(['run', 'node'])),
      limit: z.optional(z.number()),
      position: z.optional(z.number()),
      holders: z.optional(z.number()),
      starts: z.optional(z.number()),
    }),
  ),
});

const UsageSchema = z.object({ input_tokens: z.number(), output_tokens: z.number(), cost_usd: z.number() });

export const RunViewSchema = z.object({
  run_id: z.string(),
  change: z.string(),
  report: z.object({
    status: z.string(),
    workflow: z.string(),
    parent: z.optional(z.object({ run_id: z.string(), node_id: z.string() })),
    result: z.unknown(),
    errors: z.array(ErrorEntrySchema),
    warnings: z.array(ErrorEntrySchema),
    current: z.optional(z.object({ node_id: z.string(), seq: z.number(), started_at: z.string() })),
    waiting: z.optional(WaitSchema),
    steps: z.array(
      z.object({
        node_id: z.string(),
        seq: z.optional(z.number()),
        status: z.string(),
        action: z.optional(z.string()),
        duration_ms: z.number(),
        repaired: z.boolean(),
        interrupted: z.boolean(),
        error: z.optional(z.string()),
      }),
    ),
    metrics: z.object({
      duration_ms: z.number(),
      nodes_executed: z.number(),
      nodes_cached: z.number(),
      llm: UsageSchema,
      repair: UsageSchema,
      total_cost_usd: z.number(),
    }),
  }),
  graph: z.object({ start_node: z.string(), nodes: z.array(ViewNodeSchema), edges: z.array(ViewEdgeSchema) }),
  versions: z.array(ViewVersionSchema),
});
export type RunView = z.infer<typeof RunViewSchema>;

const RunSummarySchema = z.object({ run_id: z.string(), status: z.string(), workflow: z.string(), created_at: z.string() });
export type RunSummary = z.infer<typeof RunSummarySchema>;
export const RunListSchema = z.object({ runs: z.array(RunSummarySchema), next: z.nullish(z.string()) });

const ApiErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** A failed call, with the API's own message when it sent one. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const call = async <T>(schema: z.ZodMiniType<T>, path: string, init: RequestInit = {}): Promise<T> => {
  const response = await fetch(path, {
    ...init,
    headers: {
      accept: 'application/json',
      ...(init.body ? { 'content-type': 'application/json' } : {}),
      ...(init.headers as Record<string, string> | undefined),
    },
  });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const api = ApiErrorSchema.safeParse(body);
    throw new ApiError(api.success ? api.data.error.message : `${init.method ?? 'GET'} ${path} answered ${response.status}`, response.status);
  }
  const parsed = schema.safeParse(body);
  if (!parsed.success)
    throw new ApiError(`unexpected answer from ${path}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, response.status);
  return parsed.data;
};

export const fetchRuns = (filter: { workflow?: string; status?: string }): Promise<z.infer<typeof RunListSchema>> => {
  const query = new URLSearchParams({ limit: '100' });
  if (filter.workflow) query.set('workflow', filter.workflow);
  if (filter.status) query.set('status', filter.status);
  return call(RunListSchema, `/runs?${query}`);
};

/** The run page's data; with `after`, waits (up to `waitS`) until the run changes from that state. */
export const fetchRunView = (runId: string, after?: string, waitS = 20, signal?: AbortSignal): Promise<RunView> => {
  const query = after === undefined ? '' : `?${new URLSearchParams({ after, wait_s: String(waitS) })}`;
  return call(RunViewSchema, `/runs/${encodeURIComponent(runId)}/view${query}`, signal ? { signal } : {});
};

export const postRunAction = (runId: string, action: 'resume' | 'cancel'): Promise<unknown> =>
  call(z.unknown(), `/runs/${encodeURIComponent(runId)}/${action}`, { method: 'POST', body: '{}' });

/** Answers what the run waits for (a gate, a held repair): `deny` rejects; the comment is kept with the answer. */
export const postApproval = (runId: string, answer: { deny: boolean; comment: string; waitId: string }): Promise<unknown> =>
  call(z.unknown(), `/runs/${encodeURIComponent(runId)}/approve`, {
    method: 'POST',
    // Who answered, as far as the page knows: the API records it with the answer (on AWS, beside the caller's IAM identity).
    headers: { 'x-flowmend-user': 'viewer' },
    body: JSON.stringify({ deny: answer.deny, wait_id: answer.waitId, ...(answer.comment ? { comment: answer.comment } : {}) }),
  });
