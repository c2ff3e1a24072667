import type { RunStore } from '../../core/run-store.ts';
import { openUrl } from '../viewer/open-url.ts';
import { findRunningViewer, runPageUrl, startViewerServer } from '../viewer/serve-viewer.ts';
import type { RunningServer } from '../viewer/http-server.ts';

export interface ViewerIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  /** Resolves when the user asks the server to stop (Ctrl-C); the composition root passes it. */
  untilStopped?: () => Promise<void>;
}

const untilSignal = (): Promise<void> =>
  new Promise((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });

/** Starts the viewer on `port`, or on any free port when that one is taken by another program. */
const listen = async (store: RunStore, port: number): Promise<RunningServer> => {
  try {
    return await startViewerServer({ store, port });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    return startViewerServer({ store, port: 0 });
  }
};

/** `flowmend serve`: the viewer until Ctrl-C. Prints its URL first, so a script can read it. */
export const serveCommand = async (store: RunStore, options: { port: number }, io: ViewerIo): Promise<number> => {
  const server = await startViewerServer({ store, port: options.port });
  io.stdout(`Run viewer: ${server.origin}/ui/\n(Ctrl-C stops it)\n`);
  await (io.untilStopped ?? untilSignal)();
  await server.close();
  return 0;
};

/** Opens (or prints) a URL, saying which. */
export const showUrl = async (url: string, io: ViewerIo): Promise<void> => {
  const opened = await openUrl(url, io.env);
  io.stdout(opened ? `Opened ${url}\n` : `Run page: ${url}\n`);
};

/**
 * `flowmend open <run-id>`: the run's page on the viewer already serving this state dir's port, or,
 * when none is running, on one this command serves until Ctrl-C.
 */
export const openCommand = async (store: RunStore, options: { runId: string; port: number }, io: ViewerIo): Promise<number> => {
  const running = await findRunningViewer(options.port);
  if (running) {
    await showUrl(runPageUrl(running, options.runId), io);
    return 0;
  }
  const server = await listen(store, options.port);
  await showUrl(runPageUrl(server.origin, options.runId), io);
  io.stdout('(serving the viewer until Ctrl-C)\n');
  await (io.untilStopped ?? untilSignal)();
  await server.close();
  return 0;
};

/**
 * For `flowmend run --open`: a viewer for the run (the running `serve`, else one served by this process
 * while the run goes) and a hook that opens the run's page once the run is written.
 */
export const viewerForRun = async (store: RunStore, port: number, io: ViewerIo): Promise<{ open: (runId: string) => void; close: () => Promise<void> }> => {
  const running = await findRunningViewer(port);
  const server = running ? undefined : await listen(store, port);
  const origin = running ?? (server as RunningServer).origin;
  let opened = false;
  return {
    open: (runId) => {
      if (opened) return;
      opened = true;
      void showUrl(runPageUrl(origin, runId), io);
    },
    close: async () => {
      if (!server) return;
      io.stderr(`The run page was served by this command and stops with it; \`flowmend open <run-id>\` serves it again.\n`);
      await server.close();
    },
  };
};
