import { Hono, type MiddlewareHandler } from 'hono';
import { makeRunViewRoute } from '../viewer/run-view-route.ts';
import { type ApiDeps, DEFAULT_BODY_LIMIT_BYTES } from './api-deps.ts';
import { ApiError, sendError, toApiError } from './api-error.ts';
import { declaredBodyLimit } from './body-limit.ts';
import { makeRunRoutes } from './run-routes.ts';
import { makeWaitRoutes } from './wait-routes.ts';
import { makeWorkflowRoutes } from './workflow-routes.ts';

/**
 * The flowmend HTTP API (DESIGN section 7): one Hono app for API Gateway's Lambda and `flowmend serve`.
 * Every body, query and path parameter is parsed with zod; every error is `{ error: { code, message, details } }`.
 * More routes (the run viewer's `/ui/...`) can be added to the returned app; `guard` runs before all of them.
 */
export const makeApiApp = (deps: ApiDeps, options: { guard?: MiddlewareHandler } = {}): Hono => {
  const app = new Hono();
  // Before everything else, so a refused request is not even read (serve's same-origin rule).
  if (options.guard) app.use('*', options.guard);
  const limit = deps.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  app.use(
    '*',
    declaredBodyLimit(limit, (c) =>
      sendError(c, new ApiError(413, 'PAYLOAD_TOO_LARGE', `the request body is over the limit of ${limit} bytes`, { limit_bytes: limit })),
    ),
  );
  app.route('/runs', makeRunRoutes(deps));
  // The run viewer's data (GET /runs/{id}/view): on both hosts, so the page works against a deployed stack too.
  app.route(
    '/',
    makeRunViewRoute({
      store: deps.store,
      ...(deps.pollIntervalMs === undefined ? {} : { pollMs: deps.pollIntervalMs }),
      ...(deps.changes ? { changes: deps.changes } : {}),
    }),
  );
  app.route('/workflows', makeWorkflowRoutes(deps));
  // Approvals (`/runs/{id}/approve`) and callbacks (`/callbacks/{id}/{token}`, which need no credentials: DESIGN 7b).
  app.route('/', makeWaitRoutes(deps));
  app.notFound((c) => sendError(c, new ApiError(404, 'NOT_FOUND', `no route ${c.req.method} ${c.req.path}; see docs/operating-runs.md (Routes)`)));
  app.onError((error, c) => {
    const api = toApiError(error);
    // A 5xx tells the client nothing internal; the whole error goes to the server's log.
    if (api.status >= 500) (deps.logError ?? console.error)(error);
    return sendError(c, api);
  });
  return app;
};
