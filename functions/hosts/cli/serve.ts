import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { serve } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import { every } from 'hono/combine';
import { RunLog } from '../../adapters/run-log.ts';
import { openRegistryDatabase, SqliteRegistryStore } from '../../adapters/sqlite-registry-store.ts';
import { findSqliteWriterFile, launchSqliteWriter } from '../../adapters/sqlite-writer-thread.ts';
import type { Redactor, RunItem, RunLauncher, RunStore, Wakeups } from '../../core/index.ts';
import { ConfigurationError, claimRun, EngineCache } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import type { ApiDeps } from '../api/api-deps.ts';
import { ApiError } from '../api/api-error.ts';
import { makeApiApp } from '../api/app.ts';
import { isLoopbackAddress, localOriginGuard } from '../api/local-origin-guard.ts';
import { StoreChanges } from '../api/long-poll.ts';
import { readBody } from '../api/request-parsing.ts';
import { ScheduleRunner } from '../api/schedule-runner.ts';
import { tokenGuard } from '../api/token-guard.ts';
import { WaitWaker } from '../api/wait-waker.ts';
import { CommandHelper, findCommandHelperFile } from '../local/command-helper.ts';
import { FileDefinitionMemo } from '../local/definition-memo.ts';
import { flowLeaseFrom, launchWake } from '../local/flow-wakeups.ts';
import { isLocalOwnerAlive, LocalHost, type LocalHostOptions } from '../local/local-host.ts';
import { LocalRunLauncher, SERVE_OWNER_PREFIX } from '../local/local-launcher.ts';
import { findServeWorkerFile, WorkerPoolLauncher } from '../local/worker-pool-launcher.ts';
import { JsonLines, logThresholdFrom } from '../telemetry/json-lines.ts';
import { deferredTelemetry } from '../telemetry/load-telemetry.ts';
import { telemetryConfigFrom } from '../telemetry/telemetry-config.ts';
import { untilSignal } from '../viewer/until-signal.ts';
import { makeViewerPageRoutes } from '../viewer/viewer-routes.ts';
import { localCallbacks } from './cli-callbacks.ts';
import { openCliStore } from './cli-store.ts';

export interface ServeOptions {
  stateDir: string;
  port: number;
  host: string;
  /** Ticks only when told (`POST /_scheduler/tick`): the tests' injected clock. */
  manualClock: boolean;
  /** Where file nodes of the runs it starts read and write (an existing directory). */
  workspace: string;
  /** Checked on every request (`--allow-remote`): see token-guard.ts. */
  token?: string;
  hostOptions?: Partial<Omit<LocalHostOptions, 'store'>>;
  /** Worker threads that drive runs (0: this thread drives them, as it must with host options other than the repair handler). */
  workers?: number;
  /** Runs each thread that drives runs (serve's own, or each worker) drives at once; the others wait in order. */
  runsAtOnce?: number;
  /** How often a long-poll reads a run written by another process (this process's own writes wake it at once); 100 ms by default. */
  pollIntervalMs?: number;
  /** Where serve's log lines go (JSON, one a line). */
  log: (line: string) => void;
  /** Told the server's origin once it listens (the CLI prints the viewer's URL). */
  onListening?: (origin: string) => void;
  /** Resolves when the server should stop; SIGINT or SIGTERM by default. */
  untilStopped?: () => Promise<void>;
  /** The OpenTelemetry variables (hosts/telemetry/telemetry-config.ts) and FLOWMEND_LOG_LEVEL; none read when absent. */
  env?: Readonly<Record<string, string | undefined>>;
  /** The engine's secrets, kept out of log lines and spans. */
  redactor?: Redactor;
}

/**
 * serve's log lines, written together once a turn of the event loop: a busy serve logs a line per node, and a
 * write of its own for each cost ~0.04 ms of a step's CPU (a blocking write to stderr). `flush` writes what is
 * pending at once (serve's end); a line is never more than one turn late.
 */
export const linesPerTurn = (write: (text: string) => void): { line: (line: string) => void; flush: () => void } => {
  let pending: string[] = [];
  const flush = (): void => {
    if (pending.length === 0) return;
    const text = `${pending.join('\n')}\n`;
    pending = [];
    write(text);
  };
  return {
    line: (line) => {
      pending.push(line);
      if (pending.length === 1) setImmediate(flush);
    },
    flush,
  };
};

/**
 * Runs a thread that drives runs (serve's own, or each worker) drives at once unless told (`--runs-at-once`):
 * many in flight let their commits share an fsync; more would only make each turn of the thread longer
 * (and, in serve's own thread, the API's answers later) and hold more memory.
 */
export const DEFAULT_RUNS_AT_ONCE = 100;
/** How often the scheduler's clock ticks in a real serve. */
const TICK_MS = 1000;

const TickBodySchema = z.strictObject({ now: z.iso.datetime({ offset: true }) });

type Log = (message: string, fields?: Record<string, unknown>) => void;

/**
 * Resumes the runs an earlier serve on this machine was driving, or had waiting their turn, when it stopped,
 * oldest first (`candidates`: the unfinished runs a serve owns, on any machine sharing the file); another serve
 * racing it gets RunBusyError.
 */
const resumeOwnRuns = async (store: RunStore, candidates: RunItem[], launcher: RunLauncher, now: number, log: Log): Promise<void> => {
  for (const run of candidates) {
    const owner = run.owner;
    if (owner?.host !== hostname()) continue;
    if (await isLocalOwnerAlive(owner)) continue;
    try {
      const next = launcher.newOwner(run.runId, now);
      await claimRun(store, run.runId, { owner: next, now, isAlive: isLocalOwnerAlive });
      await launcher.launch({ runId: run.runId, owner: next, mode: run.mode });
      log(`resumed run ${run.runId} (its serve process ${owner.pid ?? '?'} stopped)`, { run_id: run.runId });
    } catch (error) {
      log(`run ${run.runId} was not resumed: ${(error as Error).message}`, { run_id: run.runId, level: 'WARN' });
    }
  }
};

/**
 * `flowmend serve`: the API app on @hono/node-server over the state dir's store, driving runs in this
 * process and firing registered schedules. Resolves when SIGINT or SIGTERM stopped it.
 */
export const runServe = async (options: ServeOptions): Promise<void> => {
  const stateDir = resolve(options.stateDir);
  const env = options.env ?? {};
  const config = telemetryConfigFrom(env, 'serve');
  // Every line JSON (run id, node id, visit, trace id where they apply), at FLOWMEND_LOG_LEVEL.
  const lines = new JsonLines(options.log, logThresholdFrom(env), config.serviceName);
  const log: Log = (message, { level, ...fields } = {}) => lines.write(level === 'ERROR' || level === 'WARN' ? level : 'INFO', message, fields);
  // Traces and metrics out over OTLP when an endpoint is set; metrics for GET /metrics unless OTEL_METRICS_EXPORTER leaves prometheus out.
  const telemetry = deferredTelemetry(config, {
    redactor: options.redactor,
    also: [new RunLog(lines, options.redactor)],
    onExportError: (error) => lines.write('WARN', `OpenTelemetry export failed: ${error instanceof Error ? error.message : String(error)}`, {}),
    // Every run serve starts has a trace id, exported or not: its log lines carry it, as the Lambdas' do.
    traced: true,
  });
  // One thread commits the writes of every thread that drives runs (the fsync of a group commit then blocks none of them).
  const writerFile = findSqliteWriterFile();
  // Its start (a thread, the native module, the database) overlaps serve's own; what the stores send meanwhile waits in
  // their ports. A database it cannot open fails serve's own opening below first; any other failure leaves each
  // thread committing its own writes.
  const writer = writerFile === undefined ? undefined : launchSqliteWriter(writerFile, stateDir, (message) => log(message, { level: 'WARN' }));
  writer?.ready.catch((error: unknown) =>
    log(`the database writer thread did not start (${(error as Error).message}); each thread commits its own writes`, { level: 'WARN' }),
  );
  const { store, blobs, memo, flow, close, removeOrphanBlobs, listUnfinishedOwned } = await openCliStore(
    { stateDir, store: 'sqlite', table: undefined, writerPort: writer?.port() },
    {},
  );
  // A slot handed to a waiting run starts its execution at once, not at the next tick (flow/flow-step.ts).
  let wakeLauncher: LocalRunLauncher | WorkerPoolLauncher | undefined;
  const wakeups: Wakeups = { schedule: async (request) => (request.at <= now() ? launchWake(wakeLauncher, request) : undefined) };
  const registryDb = openRegistryDatabase(stateDir);
  // Validated as Step Functions validates it, once per definition and state dir.
  // Every write of the runs this process drives (and of the API's own: a cancel) wakes the long-polls waiting on that run.
  const changes = new StoreChanges();
  const onWrite = options.hostOptions?.onWrite;
  // With --manual-clock, the last POST /_scheduler/tick sets the time (schedules, wake-ups and the engine alike),
  // which then runs on from there, so that the engine's records and events still come in order.
  let offsetMs = 0;
  const now = options.hostOptions?.now ?? (options.manualClock ? () => Date.now() + offsetMs : Date.now);
  let origin: string | undefined;
  const runsAtOnce = options.runsAtOnce ?? DEFAULT_RUNS_AT_ONCE;
  // Shell commands start from a small helper process, not from serve's thread (a fork of serve held it ~10 ms a command).
  const commandHelper = new CommandHelper(findCommandHelperFile(), (message) => log(message, { level: 'WARN' }));
  const host = new LocalHost({
    validatedDefinitions: FileDefinitionMemo.inStateDir(stateDir),
    spawnCommand: commandHelper.spawn,
    now,
    callbacks: localCallbacks(stateDir, env, () => origin),
    // Sized to the runs this thread drives at once.
    cache: EngineCache.forConcurrentRuns(runsAtOnce * 2),
    ...options.hostOptions,
    store,
    blobs,
    removeOrphanBlobs,
    memo,
    flow: { store: flow, ...flowLeaseFrom(env) },
    wakeups,
    onWrite: (write) => {
      onWrite?.(write);
      changes.noteWrite(write);
    },
    telemetry,
  });
  // Host options other than the repair handler (tests' runners, clocks, observers) cannot cross into a thread: this thread drives then.
  const threadable = Object.keys(options.hostOptions ?? {}).every((key) => key === 'makeRepairHandler');
  const workerFile = (options.workers ?? 0) > 0 && threadable ? findServeWorkerFile() : undefined;
  const launcher = workerFile
    ? new WorkerPoolLauncher({
        stateDir,
        file: workerFile,
        workers: options.workers ?? 1,
        runsPerWorker: runsAtOnce,
        ...flowLeaseFrom(env),
        store: host.store,
        ...(writer === undefined ? {} : { writerPort: writer.port }),
        onWritten: (runId) => changes.noteRun(runId),
        observe: (observations) => telemetry?.observer.observe(observations),
        log,
      })
    : new LocalRunLauncher(host, log, runsAtOnce);
  log(
    `${workerFile ? `runs are driven in ${options.workers} worker threads` : 'runs are driven in the main thread'}, at most ${runsAtOnce} at once in each; the others wait their turn`,
    { workers: workerFile ? options.workers : 0, runs_at_once: runsAtOnce },
  );
  wakeLauncher = launcher;
  const deps: ApiDeps = {
    // The local host's own catalog: the file family too, which only a host with a workspace runs.
    store: host.store,
    registry: new SqliteRegistryStore(registryDb),
    launcher,
    flow,
    catalog: host.catalog,
    now,
    workspace: options.workspace,
    changes,
    ...(options.pollIntervalMs === undefined ? {} : { pollIntervalMs: options.pollIntervalMs }),
    logError: (error) => log(`internal error: ${(error as Error).message}`, { level: 'ERROR', stack: (error as Error).stack ?? String(error) }),
    traced: telemetry.traced,
  };
  const originGuard = localOriginGuard({ loopback: isLoopbackAddress(options.host) });
  const token = options.token;
  // A callback's own token is its credential (DESIGN 7b): a third party sending one has not the serve token.
  const serveToken = token === undefined ? undefined : tokenGuard(token);
  const tokenUnlessCallback: MiddlewareHandler | undefined =
    serveToken && ((c, next) => (c.req.method === 'POST' && c.req.path.startsWith('/callbacks/') ? next() : serveToken(c, next)));
  const app = makeApiApp(deps, { guard: tokenUnlessCallback === undefined ? originGuard : every(tokenUnlessCallback, originGuard) });
  app.get('/metrics', async (c) => {
    if (!telemetry.prometheusText)
      throw new ApiError(404, 'NOT_FOUND', 'metrics are off: OTEL_METRICS_EXPORTER leaves out prometheus, or OTEL_SDK_DISABLED is true');
    return c.body(await telemetry.prometheusText(), 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });
  app.route('/', makeViewerPageRoutes());
  const scheduler = new ScheduleRunner(deps, now(), (message) => log(message, { level: 'WARN' }));
  const waker = new WaitWaker(deps, (message) => log(message, { level: 'WARN' }));
  let timer: NodeJS.Timeout | undefined;
  if (options.manualClock) {
    app.post('/_scheduler/tick', async (c) => {
      const body = await readBody(c, TickBodySchema);
      const at = Date.parse(body.now);
      offsetMs = at - Date.now();
      return c.json({ fired: await scheduler.tick(at), woken: await waker.tick(at) });
    });
  } else {
    const tick = () => {
      scheduler.tick(now()).catch((error: unknown) => log(`scheduler tick failed: ${(error as Error).message}`, { level: 'ERROR' }));
      waker.tick(now()).catch((error: unknown) => log(`wake-up tick failed: ${(error as Error).message}`, { level: 'ERROR' }));
    };
    timer = setInterval(tick, TICK_MS);
  }
  // serve's store is SQLite's, which lists them all (openCliStore gives no such list for DynamoDB).
  if (!listUnfinishedOwned) throw new Error('serve opened a store that cannot list its unfinished runs');
  await resumeOwnRuns(store, await listUnfinishedOwned(SERVE_OWNER_PREFIX), launcher, now(), log);
  const server = await new Promise<ReturnType<typeof serve>>((done, fail) => {
    const s = serve({ fetch: app.fetch, port: options.port, hostname: options.host }, (info) => {
      origin = `http://${info.family === 'IPv6' ? `[${info.address}]` : info.address}:${info.port}`;
      log(`flowmend API listening on ${origin} (state dir ${stateDir})`, { state_dir: stateDir });
      if (launcher instanceof WorkerPoolLauncher) launcher.setOrigin(origin);
      options.onListening?.(origin);
      // The OpenTelemetry SDK, when anything is exported, loads now that the port is open.
      setImmediate(() => void telemetry.start());
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
  if (launcher instanceof WorkerPoolLauncher) await launcher.close();
  commandHelper.close();
  registryDb.close();
  close();
  await writer?.close();
  await telemetry.shutdown();
};
