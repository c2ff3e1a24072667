import { Hono } from 'hono';
import type { ListedRun } from '../../core/index.ts';
import {
  changeOf,
  listingWindow,
  listRunTree,
  loadRunReport,
  loadRunWorkflow,
  ProgressCursorSchema,
  type ProgressPage,
  readProgress,
  withFlow,
} from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import type { ApiDeps } from './api-deps.ts';
import { ApiError, invalidRequest, notFound } from './api-error.ts';
import {
  EventsQuerySchema,
  encodeRunsCursor,
  IdempotencyKeySchema,
  ListRunsQuerySchema,
  ResumeBodySchema,
  RunIdParamSchema,
  RunsCursorSchema,
  StartRunBodySchema,
} from './api-schemas.ts';
import { pollRun } from './long-poll.ts';
import { hasMarkdownBody, markdownStartBody } from './markdown-workflow.ts';
import { readBody, readParams, readQuery } from './request-parsing.ts';
import { cancelRunAndStop, resumeRun, startRun } from './run-operations.ts';

const linksOf = (runId: string) => ({
  self: `/runs/${runId}`,
  events: `/runs/${runId}/events`,
  resume: `/runs/${runId}/resume`,
  cancel: `/runs/${runId}/cancel`,
  approve: `/runs/${runId}/approve`,
});

const summaryOf = ({ run: r, children, parentRunId }: ListedRun) => ({
  run_id: r.runId,
  status: r.status,
  workflow: r.workflowName,
  ...(r.workflowVersion === undefined ? {} : { workflow_version: r.workflowVersion }),
  created_at: new Date(r.createdAt).toISOString(),
  updated_at: new Date(r.updatedAt).toISOString(),
  nodes_executed: r.metrics.nodesExecuted,
  children,
  ...(parentRunId ? { parent_run_id: parentRunId } : {}),
  ...(r.status === 'waiting' && r.wait
    ? {
        waiting: {
          kind: r.wait.kind,
          ...(r.wait.nodeId ? { node_id: r.wait.nodeId } : {}),
          ...(r.wait.until === undefined ? {} : { until: new Date(r.wait.until).toISOString() }),
          ...withFlow(r.wait),
        },
      }
    : {}),
});

/**
 * Largest answer the API gives: a Lambda answers at most 6 MB (API Gateway then answers a bare 502), and
 * a run's result can be larger (a node's output may be 10 MiB). A report over it leaves its result out,
 * saying so; GET /runs/{id}/result answers the result alone when it fits.
 */
export const MAX_ANSWER_BYTES = 5 * 1024 * 1024;

const jsonBytes = (value: unknown): number => (value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value)));

const withinAnswerLimit = <R extends { result?: unknown; children?: R[] }>(report: R, runId: string): R => {
  if (jsonBytes(report) <= MAX_ANSWER_BYTES) return report;
  const omit = (r: R): R => {
    const { result, children, ...rest } = r;
    return {
      ...rest,
      ...(result === undefined ? {} : { result_omitted: { bytes: jsonBytes(result), link: `/runs/${runId}/result` } }),
      ...(children === undefined ? {} : { children: children.map(omit) }),
    } as R;
  };
  return omit(report);
};

/** `/runs`: start, list, inspect, follow, resume and cancel runs. */
export const makeRunRoutes = (deps: ApiDeps): Hono => {
  const app = new Hono();

  app.post('/', async (c) => {
    const header = c.req.header('Idempotency-Key');
    const key = header === undefined ? undefined : IdempotencyKeySchema.safeParse(header);
    if (key && !key.success) throw invalidRequest('Idempotency-Key header', key.error);
    const body = hasMarkdownBody(c) ? await markdownStartBody(c) : await readBody(c, StartRunBodySchema);
    // A W3C traceparent puts the run in the caller's trace (an invalid one is ignored, as the spec says).
    const started = await startRun(deps, body, key?.data, c.req.header('traceparent'));
    if (started.replayed) c.header('Idempotent-Replayed', 'true');
    return c.json(
      {
        run_id: started.runId,
        status: 'running',
        workflow: started.workflowName,
        ...(started.workflowVersion === undefined ? {} : { workflow_version: started.workflowVersion }),
        replayed: started.replayed,
        links: linksOf(started.runId),
      },
      202,
    );
  });

  app.get('/', async (c) => {
    const query = readQuery(c, ListRunsQuerySchema);
    let after: { c: number; r: string } | undefined;
    if (query.cursor !== undefined) {
      const cursor = z.object({ cursor: RunsCursorSchema }).safeParse({ cursor: query.cursor });
      if (!cursor.success) throw invalidRequest('query', cursor.error);
      after = cursor.data.cursor;
    }
    // Read more than the page (the status and the cursor filter here), bounded by the page's size (listingWindow).
    const scanned = await deps.store.listRuns({ limit: listingWindow(query.limit), ...(query.workflow ? { workflowName: query.workflow } : {}) });
    // Top-level runs, each with its child runs counted, unless ?include=children lists the children too.
    const runs = listRunTree(scanned, { includeChildren: query.include === 'children' })
      .filter(({ run: r }) => query.status === undefined || r.status === query.status)
      // Newest first: a page continues with runs older than the cursor's (ties broken by id, as the store sorts).
      .filter(({ run: r }) => !after || r.createdAt < after.c || (r.createdAt === after.c && r.runId < after.r));
    const page = runs.slice(0, query.limit);
    const last = page.at(-1)?.run;
    return c.json({ runs: page.map(summaryOf), ...(runs.length > page.length && last ? { next_cursor: encodeRunsCursor(last.createdAt, last.runId) } : {}) });
  });

  app.get('/:id', async (c) => {
    const { id } = readParams(c, RunIdParamSchema);
    const report = await loadRunReport(deps.store, id);
    if (!report) throw notFound(`run '${id}'`);
    return c.json(withinAnswerLimit(report, id));
  });

  app.get('/:id/result', async (c) => {
    const { id } = readParams(c, RunIdParamSchema);
    const report = await loadRunReport(deps.store, id);
    if (!report) throw notFound(`run '${id}'`);
    const bytes = jsonBytes(report.result);
    if (bytes > MAX_ANSWER_BYTES) {
      throw new ApiError(
        413,
        'RESULT_TOO_LARGE',
        `run ${id}'s result is ${bytes} bytes, over what the API answers (${MAX_ANSWER_BYTES}); read it from the store (flowmend status ${id} --store ...)`,
      );
    }
    return c.json({ run_id: id, status: report.status, result: report.result });
  });

  // The run's current workflow (a repaired version included): what a person edits for a resume with a patch.
  app.get('/:id/workflow', async (c) => {
    const { id } = readParams(c, RunIdParamSchema);
    const current = await loadRunWorkflow(deps.store, id);
    if (!current) throw notFound(`run '${id}'`);
    return c.json(current);
  });

  app.get('/:id/events', async (c) => {
    const { id } = readParams(c, RunIdParamSchema);
    const query = readQuery(c, EventsQuerySchema);
    let after: z.output<typeof ProgressCursorSchema> | undefined;
    if (query.after !== undefined) {
      const cursor = z.object({ after: ProgressCursorSchema }).safeParse({ after: query.after });
      if (!cursor.success) throw invalidRequest('query', cursor.error);
      after = cursor.data.after;
    }
    // Long-poll: a running run with nothing new yet is read again until something comes, `wait` runs out or the
    // client leaves. Each poll reads the run item alone; its events and records only when it changed.
    let seen: { change: string; page: ProgressPage | undefined } | undefined;
    const read = async (): Promise<ProgressPage | undefined> => {
      const run = await deps.store.getRun(id);
      if (!run) return undefined;
      const change = changeOf(run);
      if (seen?.change !== change) seen = { change, page: await readProgress(deps.store, id, after, query.limit, run) };
      return seen.page;
    };
    const page = await pollRun(
      id,
      { changes: deps.changes, pollMs: deps.pollIntervalMs ?? 100, until: deps.now() + query.wait * 1000, now: deps.now, signal: c.req.raw.signal },
      read,
      (got) => !got || got.events.length > 0 || got.status !== 'running',
    );
    if (!page) throw notFound(`run '${id}'`);
    return c.json({ run_id: id, status: page.status, events: page.events, cursor: page.cursor, more: page.more });
  });

  app.post('/:id/resume', async (c) => {
    const { id } = readParams(c, RunIdParamSchema);
    const body = await readBody(c, ResumeBodySchema, { emptyIsObject: true });
    const run = await resumeRun(deps, id, body, c.req.header('traceparent'));
    return c.json({ run_id: id, status: 'running', workflow_version: run.irVersion, links: linksOf(id) }, 202);
  });

  app.post('/:id/cancel', async (c) => {
    const { id } = readParams(c, RunIdParamSchema);
    await readBody(c, z.pick(ResumeBodySchema, {}), { emptyIsObject: true });
    const result = await cancelRunAndStop(deps, id);
    return c.json({
      run_id: id,
      status: 'cancelled',
      already_cancelled: result.alreadyCancelled,
      ...result.outcome,
      links: linksOf(id),
    });
  });

  return app;
};
