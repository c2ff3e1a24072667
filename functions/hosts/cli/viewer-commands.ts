import type { RunStore } from '../../core/index.ts';
import type { RunningServer } from '../viewer/http-server.ts';
import { openUrl } from '../viewer/open-url.ts';
import type { ViewerServerOptions } from '../viewer/serve-viewer.ts';
import { untilSignal } from '../viewer/until-signal.ts';
import { signerForApi } from './api-client.ts';

export interface ViewerIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the user asks the server to stop (Ctrl-C by default). */
  untilStopped?: () => Promise<void>;
}

/** Where the viewer's data comes from: the local store, or a remote API (signed when it is API Gateway's). */
export type ViewerSource = { store: RunStore } | { api: string };

/** The viewer's server (Hono) loads only for the commands that serve a page, not at every CLI start. */
const viewerServer = () => import('../viewer/serve-viewer.ts');
const startViewerServer = async (options: ViewerServerOptions): Promise<RunningServer> => (await viewerServer()).startViewerServer(options);
const findRunningViewer = async (port: number): Promise<string | undefined> => (await viewerServer()).findRunningViewer(port);

const serverOptions = async (source: ViewerSource, port: number): Promise<ViewerServerOptions> =>
  'api' in source ? { api: source.api, signer: await signerForApi(source.api), port } : { store: source.store, port };

/** Starts the viewer on `port`, or on any free port when another program has that one. */
const listen = async (source: ViewerSource, port: number): Promise<RunningServer> => {
  try {
    return await startViewerServer(await serverOptions(source, port));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startViewerServer(await serverOptions(source, 0));
  }
};

/** Opens (or prints) a URL, saying which. */
const showUrl = async (url: string, io: ViewerIo): Promise<void> => {
  const opened = await openUrl(url, io.env);
  io.stdout(opened ? `Opened ${url}\n` : `Run page: ${url}\n`);
};

/** `flowmend serve --api URL`: the viewer on 127.0.0.1 for a remote API, its calls forwarded (signed), until Ctrl-C. */
export const serveViewerOnly = async (options: { api: string; port: number }, io: ViewerIo): Promise<number> => {
  const server = await startViewerServer(await serverOptions({ api: options.api }, options.port));
  io.stdout(`Run viewer: ${server.origin}/ui/ (runs of ${options.api})\n`);
  await (io.untilStopped ?? untilSignal)();
  await server.close();
  return 0;
};

/**
 * `flowmend open <run-id>`: the run's page on the viewer already listening on `port` (a `flowmend serve`),
 * or, when none is, on one this command serves until Ctrl-C.
 */
export const openCommand = async (source: ViewerSource, options: { runId: string; port: number }, io: ViewerIo): Promise<number> => {
  const { runPageUrl } = await viewerServer();
  const running = 'api' in source ? undefined : await findRunningViewer(options.port);
  if (running) {
    await showUrl(runPageUrl(running, options.runId), io);
    return 0;
  }
  const server = await listen(source, options.port);
  await showUrl(runPageUrl(server.origin, options.runId), io);
  io.stdout('(serving the viewer until Ctrl-C)\n');
  await (io.untilStopped ?? untilSignal)();
  await server.close();
  return 0;
};

/**
 * For `flowmend run --open`: a viewer for the run (the `serve` on `port`, else one served by this
 * process while the run goes) and a hook that opens the run's page once the run is written.
 */
export const viewerForRun = async (store: RunStore, port: number, io: ViewerIo): Promise<{ open: (runId: string) => void; close: () => Promise<void> }> => {
  const { runPageUrl } = await viewerServer();
  const running = await findRunningViewer(port);
  const server = running ? undefined : await listen({ store }, port);
  const origin = running ?? (server as RunningServer).origin;
  let shown: Promise<void> | undefined;
  return {
    open: (runId) => {
      shown ??= showUrl(runPageUrl(origin, runId), io);
    },
    close: async () => {
      // The line saying where the page is comes before the command's own output ends.
      await shown;
      if (!server) return;
      io.stderr('The run page was served by this command and stops with it; `flowmend open <run-id>` serves it again.\n');
      await server.close();
    },
  };
};
