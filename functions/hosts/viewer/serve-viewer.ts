import { Hono } from 'hono';
import type { RunStore } from '../../core/index.ts';
import { exchange } from '../../nodes/http-client.ts';
import { type ForwardSigner, makeApiForwarder } from './api-forwarder.ts';
import { listenLocal, type RunningServer } from './http-server.ts';
import { makeRunListRoute } from './run-list-route.ts';
import { makeViewerPageRoutes, makeViewerRoutes, VIEWER_HEADER } from './viewer-routes.ts';

export type ViewerServerOptions =
  | { store: RunStore; port: number }
  /** The page here, its data from a remote API through the (signing) forwarder. */
  | { api: string; signer: ForwardSigner | undefined; port: number };

/** The viewer and the routes its page calls, on 127.0.0.1: from the local store, or forwarded to a remote API. */
export const startViewerServer = async (options: ViewerServerOptions): Promise<RunningServer> => {
  const app = new Hono();
  if ('api' in options) {
    app.route('/', makeViewerPageRoutes());
    app.route('/', makeApiForwarder(options.api, options.signer));
  } else {
    app.route('/', makeViewerRoutes({ store: options.store }));
    app.route('/', makeRunListRoute(options.store));
  }
  return listenLocal(app, options.port);
};

/** The origin of a flowmend viewer already listening on this port of 127.0.0.1, if one is. */
export const findRunningViewer = async (port: number): Promise<string | undefined> => {
  if (port === 0) return undefined;
  const origin = `http://127.0.0.1:${port}`;
  try {
    // node:http (the http node's client), not fetch: `open` would pay fetch's first load for one ping.
    const response = await exchange(new URL(`${origin}/ui/ping`), { method: 'GET', headers: {}, signal: AbortSignal.timeout(3000), maxBytes: 64 * 1024 });
    return response.headers[VIEWER_HEADER] ? origin : undefined;
  } catch {
    return undefined;
  }
};

/** The run page's address. */
export const runPageUrl = (origin: string, runId: string): string => `${origin}/ui/runs/${encodeURIComponent(runId)}`;
