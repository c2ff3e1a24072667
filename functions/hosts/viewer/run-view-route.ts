import { Hono } from 'hono';
import type { RunStore } from '../../core/index.ts';
import { changeOf, loadRunView, RunIdSchema } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { pollRun, type StoreChanges } from '../api/long-poll.ts';

export interface RunViewDeps {
  store: RunStore;
  /** How often a long-poll reads the run item while it waits (ms). */
  pollMs?: number;
  /** `serve`: this process's own writes, which wake a long-poll before its next read. */
  changes?: StoreChanges;
}

/** A long-poll ends within 20 s, as the events route's: the API Lambda (25 s) must answer before API Gateway's 29 s. */
const MAX_WAIT_S = 20;

const ViewQuerySchema = z.object({
  after: z.optional(z.string().check(z.maxLength(200, 'after is the "change" of a view you already have'))),
  wait_s: z._default(
    z.coerce.number({ error: 'wait_s is a number of seconds' }).check(z.gte(0, 'wait_s is 0 or more'), z.lte(MAX_WAIT_S, `wait_s is at most ${MAX_WAIT_S}`)),
    20,
  ),
});

const apiError = (code: string, message: string) => ({ error: { code, message } });

/**
 * GET /runs/{id}/view: the run page's data in one read (the report, the graph with each node's latest
 * status, the workflow's versions). With `after`, it waits until the run changes (long-poll): that is how
 * the page follows a live run, and it works unchanged through API Gateway (29 s limit) and the SigV4 forwarder.
 */
export const makeRunViewRoute = (deps: RunViewDeps): Hono => {
  const app = new Hono();
  const pollMs = deps.pollMs ?? 200;

  app.get('/runs/:id/view', async (c) => {
    const id = RunIdSchema.safeParse(c.req.param('id'));
    if (!id.success) return c.json(apiError('BAD_REQUEST', `run id: ${id.error.issues[0]?.message ?? 'invalid'}`), 400);
    const query = ViewQuerySchema.safeParse(c.req.query());
    if (!query.success) return c.json(apiError('BAD_REQUEST', query.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')), 400);
    const { after, wait_s: waitS } = query.data;
    if (after !== undefined) {
      // Wait on the run item alone (one small read per poll) until it moves on, the client leaves, or time is up.
      await pollRun(
        id.data,
        { changes: deps.changes, pollMs, until: Date.now() + waitS * 1000, now: Date.now, signal: c.req.raw.signal },
        () => deps.store.getRun(id.data),
        (run) => !run || changeOf(run) !== after,
      );
    }
    const view = await loadRunView(deps.store, id.data);
    if (!view) return c.json(apiError('RUN_NOT_FOUND', `no run '${id.data}'`), 404);
    return c.json(view, 200, { 'cache-control': 'no-store' });
  });
  return app;
};
