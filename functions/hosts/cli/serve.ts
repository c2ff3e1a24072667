import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { serve } from '@hono/node-server';
import { openRegistryDatabase, SqliteRegistryStore } from '../../adapters/sqlite-registry-store.ts';
import type { RunStore } from '../../core/index.ts';
import { ConfigurationError, claimRun } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import type { ApiDeps } from '../api/api-deps.ts';
import { makeApiApp } from '../api/app.ts';
import { isLoopbackAddress, localOriginGuard } from '../api/local-origin-guard.ts';
import { StoreChanges } from '../api/long-poll.ts';
import { readBody } from '../api/request-parsing.ts';
import { ScheduleRunner } from '../api/schedule-runner.ts';
import { FileDefinitionMemo } from '../local/definition-memo.ts';
import { isLocalOwnerAlive, LocalHost, type LocalHostOptions } from '../local/local-host.ts';
import { LocalRunLauncher, SERVE_OWNER_PREFIX } from '../local/local-launcher.ts';
import { untilSignal } from '../viewer/until-signal.ts';
import { makeViewerPageRoutes } from '../viewer/viewer-routes.ts';
import { openCliStore } from './cli-store.ts';

export interface ServeOptions {
  stateDir: string;
  port: number;
  host: string;
  /** Ticks only when told (`POST /_scheduler/tick`): the tests' injected clock. */
  manualClock: boolean;
  /** Where file nodes of the runs it starts read and write (an existing directory). */
  workspace: string;
  hostOptions?: Partial<Omit<LocalHostOptions, 'store'>>;
  /** How often a long-poll reads a run written by another process (this process's own writes wake it at once); 100 ms by default. */
  pollIntervalMs?: number;
  log: (line: string) => void;
  /** Told the server's origin once it listens (the CLI prints the viewer's URL). */
  onListening?: (origin: string) => void;
  /** Resolves when the server should stop; SIGINT or SIGTERM by default. */
  untilStopped?: () => Promise<void>;
}

/** How often the scheduler's clock ticks in a real serve. */
const TICK_MS = 1000;
/** How many recent runs serve looks through on start for its own interrupted ones. */
const RECOVERY_SCAN = 500;

const TickBodySchema = z.strictObject({ now: z.iso.datetime({ offset: true }) });

/** Resumes the runs an earlier serve on this machine was driving when it stopped; another serve racing it gets RunBusyError. */
const resumeOwnRuns = async (store: RunStore, launcher: LocalRunLauncher, now: number, log: (line: string) => void): Promise<void> => {
  for (const run of await store.listRuns({ limit: RECOVERY_SCAN })) {
    const owner = run.owner;
    if ((run.status !== 'running' && run.status !== 'interrupted') || !owner?.id.startsWith(SERVE_OWNER_PREFIX) || owner.host !== hostname()) continue;
    if (await isLocalOwnerAlive(owner)) continue;
    try {
      const next = launcher.newOwner(run.runId, now);
      await claimRun(store, run.runId, { owner: next, now, isAlive: isLocalOwnerAlive });
      await launcher.launch({ runId: run.runId, owner: next, mode: run.mode });
      log(`resumed run ${run.runId} (its serve process ${owner.pid ?? '?'} stopped)`);
    } catch (error) {
      log(`run ${run.runId} was not resumed: ${(error as Error).message}`);
    }
  }
};

/**
 * `flowmend serve`: the API app on @hono/node-server over the state dir's store, driving runs in this
 * process and firing registered schedules. Resolves when SIGINT or SIGTERM stopped it.
 */
export const runServe = async (options: ServeOptions): Promise<void> => {
  const stateDir = resolve(options.stateDir);
  const { store, blobs, close } = await openCliStore({ stateDir, store: 'sqlite', table: undefined }, {});
  const registryDb = openRegistryDatabase(stateDir);
  // Validated as Step Functions validates it, once per definition and state dir.
  // Every write of the runs this process drives (and of the API's own: a cancel) wakes the long-polls waiting on that run.
  const changes = new StoreChanges();
  const onWrite = options.hostOptions?.onWrite;
  const host = new LocalHost({
    validatedDefinitions: FileDefinitionMemo.inStateDir(stateDir),
    ...options.hostOptions,
    store,
    blobs,
    onWrite: (write) => {
      onWrite?.(write);
      changes.noteWrite(write);
    },
  });
  const launcher = new LocalRunLauncher(host, options.log);
  const deps: ApiDeps = {
    // The local host's own catalog: the file family too, which only a host with a workspace runs.
    store: host.store,
    registry: new SqliteRegistryStore(registryDb),
    launcher,
    catalog: host.catalog,
    now: Date.now,
    workspace: options.workspace,
    changes,
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    logError: (error) => options.log(`internal error: ${(error as Error).stack ?? String(error)}`),
  };
  const app = makeApiApp(deps, { guard: localOriginGuard({ loopback: isLoopbackAddress(options.host) }) });
  app.route('/', makeViewerPageRoutes());
  const scheduler = new ScheduleRunner(deps, Date.now(), options.log);
  let timer: NodeJS.Timeout | undefined;
  if (options.manualClock) {
    app.post('/_scheduler/tick', async (c) => {
      const body = await readBody(c, TickBodySchema);
      return c.json({ fired: await scheduler.tick(Date.parse(body.now)) });
    });
  } else {
    const tick = () => {
      scheduler.tick(Date.now()).catch((error: unknown) => options.log(`scheduler tick failed: ${(error as Error).message}`));
    };
    timer = setInterval(tick, TICK_MS);
  }
  await resumeOwnRuns(store, launcher, Date.now(), options.log);
  const server = await new Promise<ReturnType<typeof serve>>((done, fail) => {
    const s = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      const origin = `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`;
      options.log(`flowmend API listening on ${origin} (state dir ${stateDir})`);
      options.onListening?.(origin);
      done(s);
    });
    s.once('error', (error: NodeJS.ErrnoException) =>
      fail(new ConfigurationError(`cannot listen on ${options.host}:${options.port}: ${error.code ?? error.message}; pick another --port`, { cause: error })),
    );
  });
  await (options.untilStopped ?? untilSignal)();
  if (timer) clearInterval(timer);
  // Long-polls (events, the viewer) hold connections open; drop them so close does not wait out their timeouts.
  (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
  await new Promise<void>((done) => server.close(() => done()));
  // Runs still going stay durable and `running`: the next serve resumes them.
  registryDb.close();
  close();
};
