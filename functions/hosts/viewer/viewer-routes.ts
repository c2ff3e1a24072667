import { Hono } from 'hono';
import { makeRunViewRoute, type RunViewDeps } from './run-view-route.ts';
import { viewerAssets } from './viewer-assets.ts';

/** Sent with the page, so `flowmend open` can tell a flowmend viewer from another program on the port. */
export const VIEWER_HEADER = 'x-flowmend-viewer';

/** The page's own origin only: no inline script, no other host, nothing framed. */
const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  [VIEWER_HEADER]: '1',
};

/** The run viewer: the page under /ui and the data route it reads (see run-view-route.ts). */
export const makeViewerRoutes = (deps: RunViewDeps): Hono => {
  const app = new Hono();
  app.route('/', makeViewerPageRoutes());
  app.route('/', makeRunViewRoute(deps));
  return app;
};

/** The page and its assets (no data): served on 127.0.0.1 in front of a remote API too. */
export const makeViewerPageRoutes = (): Hono => {
  const app = new Hono();
  const page = async (): Promise<Response> =>
    new Response((await viewerAssets()).html, { headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS } });
  // The root of `serve` (and of a viewer before a remote API) is the runs list: a person types the host and port.
  app.get('/', (c) => c.redirect('/ui/'));
  app.get('/ui', (c) => c.redirect('/ui/'));
  // Cheap (no bundle built) for `flowmend open` to find a running viewer.
  app.get('/ui/ping', () => new Response(null, { status: 204, headers: { [VIEWER_HEADER]: '1' } }));
  app.get('/ui/', () => page());
  app.get('/ui/runs/:id', () => page());
  app.get(
    '/ui/assets/viewer.js',
    async () =>
      new Response((await viewerAssets()).js, {
        headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS },
      }),
  );
  app.get(
    '/ui/assets/viewer.css',
    async () =>
      new Response((await viewerAssets()).css, { headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'no-cache', ...SECURITY_HEADERS } }),
  );
  return app;
};
