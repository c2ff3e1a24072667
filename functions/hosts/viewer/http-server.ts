import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { Hono } from 'hono';

export interface RunningServer {
  /** http://127.0.0.1:PORT */
  origin: string;
  port: number;
  close: () => Promise<void>;
}

/** Serves an app on 127.0.0.1 only (port 0: any free one); resolves once it listens. */
export const listenLocal = (app: Hono, port: number): Promise<RunningServer> =>
  new Promise((resolve, reject) => {
    const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }, (info: AddressInfo) => {
      resolve({
        origin: `http://127.0.0.1:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            // Long-polls hold connections open; drop them so close does not wait up to their timeout.
            (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
            server.close(() => done());
          }),
      });
    });
    server.once('error', reject);
  });
