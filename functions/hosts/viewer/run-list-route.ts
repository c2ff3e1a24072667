import { Hono } from 'hono';
import type { RunStore } from '../../core/index.ts';
import { listingWindow, listRunTree, RunStatusSchema } from '../../core/index.ts';
import * as z from '../../core/zod.ts';

const QuerySchema = z.object({
  workflow: z.optional(z.string().check(z.maxLength(200))),
  status: z.optional(RunStatusSchema),
  limit: z._default(
    z.coerce.number({ error: 'limit is a whole number' }).check(z.int(), z.gte(1, 'limit is 1 or more'), z.lte(500, 'limit is at most 500')),
    100,
  ),
  include: z.optional(z.enum(['children'], { error: 'include is `children` (list child runs too) or absent (top-level runs only)' })),
});

/**
 * GET /runs for a viewer served without the full API (newest first, by workflow and status), in the
 * shape `flowmend runs --output-format json` prints. The API app's own GET /runs replaces it when mounted.
 */
export const makeRunListRoute = (store: RunStore): Hono => {
  const app = new Hono();
  app.get('/runs', async (c) => {
    const query = QuerySchema.safeParse(c.req.query());
    if (!query.success)
      return c.json({ error: { code: 'BAD_REQUEST', message: query.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ') } }, 400);
    const { workflow, status, limit, include } = query.data;
    // The store filters by workflow; status and child runs are filtered here, so read more than asked (bounded).
    const runs = await store.listRuns({ limit: listingWindow(limit), ...(workflow ? { workflowName: workflow } : {}) });
    const picked = listRunTree(runs, { includeChildren: include === 'children' })
      .filter(({ run }) => !status || run.status === status)
      .slice(0, limit);
    return c.json({
      runs: picked.map(({ run: r, children, parentRunId }) => ({
        run_id: r.runId,
        status: r.status,
        workflow: r.workflowName,
        created_at: new Date(r.createdAt).toISOString(),
        nodes_executed: r.metrics.nodesExecuted,
        children,
        ...(parentRunId ? { parent_run_id: parentRunId } : {}),
      })),
    });
  });
  return app;
};
