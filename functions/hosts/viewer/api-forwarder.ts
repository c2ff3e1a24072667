import type { Context } from 'hono';
import { Hono } from 'hono';

/** Signs a request for the remote API (SigV4 for API Gateway); returns the headers to send. */
export type ForwardSigner = (request: { method: string; url: URL; headers: Record<string, string>; body?: string }) => Promise<Record<string, string>>;

/** The only calls the page makes: nothing else of the stack is reachable through the forwarder. */
const FORWARDED: readonly { method: 'GET' | 'POST'; path: string }[] = [
  { method: 'GET', path: '/runs' },
  { method: 'GET', path: '/runs/:id/view' },
  { method: 'POST', path: '/runs/:id/resume' },
  { method: 'POST', path: '/runs/:id/cancel' },
];

/** A forwarded call that could not reach the API, in the API's own error shape. */
const unreachable = (c: Context, base: string, error: unknown): Response =>
  c.json(
    {
      error: {
        code: 'UNREACHABLE',
        message: `cannot reach the flowmend API at ${base}: ${(error as Error & { cause?: Error }).cause?.message ?? (error as Error).message}`,
      },
    },
    502,
  );

/**
 * Routes that pass the page's API calls to a remote flowmend API (a deployed stack), signed with the
 * user's credentials: the browser never holds them, and the stack is not opened to it. A POST must be
 * JSON from this origin, so another web page open in the same browser cannot drive it.
 */
export const makeApiForwarder = (apiBase: string, signer: ForwardSigner | undefined): Hono => {
  const app = new Hono();
  for (const route of FORWARDED) {
    app.on(route.method, route.path, async (c) => {
      if (route.method === 'POST') {
        const origin = c.req.header('origin');
        const self = new URL(c.req.url).origin;
        if ((origin !== undefined && origin !== self) || !c.req.header('content-type')?.startsWith('application/json')) {
          return c.json({ error: { code: 'FORBIDDEN', message: 'only the run viewer on this origin may call this route, with a JSON body' } }, 403);
        }
      }
      const incoming = new URL(c.req.url);
      const url = new URL(`${apiBase}${incoming.pathname}${incoming.search}`);
      const body = route.method === 'POST' ? await c.req.text() : undefined;
      let headers: Record<string, string> = { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
      try {
        if (signer) headers = await signer({ method: route.method, url, headers, ...(body === undefined ? {} : { body }) });
        const response = await fetch(url, { method: route.method, headers, ...(body === undefined ? {} : { body }), signal: c.req.raw.signal });
        return new Response(await response.arrayBuffer(), {
          status: response.status,
          headers: { 'content-type': response.headers.get('content-type') ?? 'application/json', 'cache-control': 'no-store' },
        });
      } catch (error) {
        return unreachable(c, apiBase, error);
      }
    });
  }
  return app;
};
