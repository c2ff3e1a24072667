// One worker thread of `flowmend serve` (worker-pool-launcher.ts): the local host over its own connection to the
// state dir's SQLite file, driving the runs the pool hands it. The API, the scheduler and every claim stay in
// serve's main thread; this thread only drives runs whose owner the main thread already wrote.
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { LaunchRequest, RunItem, RunObservation, WakeRequest } from '../../core/index.ts';
import { EngineCache } from '../../core/index.ts';
import { localCallbacks } from '../cli/cli-callbacks.ts';
import { openCliStore } from '../cli/cli-store.ts';
import { FileDefinitionMemo } from './definition-memo.ts';
import { lazyRepairHandler } from './lazy-repair-handler.ts';
import { LocalHost } from './local-host.ts';
import { LocalRunLauncher } from './local-launcher.ts';

/** What the pool sends a worker. */
export type ToWorker = ({ type: 'launch' } & LaunchRequest) | { type: 'stop'; ownerId: string } | { type: 'origin'; origin: string };

/** What a worker sends the pool. */
export type FromWorker =
  | { type: 'ready' }
  | { type: 'written'; runId: string }
  | { type: 'observed'; observations: readonly RunObservation[] }
  | { type: 'log'; message: string; fields?: Record<string, unknown> }
  /** A wake-up due now (a concurrency slot handed to a waiting run): the pool launches it, as serve's own thread does. */
  | { type: 'wake'; request: WakeRequest }
  | { type: 'done'; ownerId: string }
  | { type: 'stopped'; ownerId: string };

export interface ServeWorkerData {
  stateDir: string;
  /** Runs the pool hands this worker at once, at most. */
  runsPerWorker: number;
  /** FLOWMEND_FLOW_LEASE_MARGIN_S as serve read it (flowLeaseFrom). */
  leaseMarginMs?: number;
  /** serve's writer thread (sqlite-writer-thread.ts): this worker's run store commits through it. */
  writerPort?: MessagePort;
}

/**
 * An observation as the main thread's observers read it (log lines, spans, metrics: the run's id, workflow,
 * status, trace and parent): without the parts of the run item that grow with the run, which every message
 * would otherwise copy (structured clone) at every step.
 */
const withLightRun = (observation: RunObservation): RunObservation => {
  const { params, pendingRecords, latest, visits, outputs, children, batch, itemRecords, repairs, ...light } = observation.run;
  return { ...observation, run: light as RunItem };
};

/** Opens the store and answers the pool (a CommonJS bundle has no top-level await). */
const serveRuns = async (port: NonNullable<typeof parentPort>): Promise<void> => {
  // One message a turn of the event loop, the writes' run ids once each: a step makes several writes and observations.
  let outbox: FromWorker[] = [];
  const written = new Set<string>();
  const post = (message: FromWorker): void => {
    if (message.type === 'written') {
      if (written.has(message.runId)) return;
      written.add(message.runId);
    }
    outbox.push(message);
    if (outbox.length === 1) {
      setImmediate(() => {
        port.postMessage(outbox);
        outbox = [];
        written.clear();
      });
    }
  };
  const { stateDir, runsPerWorker, leaseMarginMs, writerPort } = workerData as ServeWorkerData;
  const { store, blobs, memo, flow } = await openCliStore({ stateDir, store: 'sqlite', table: undefined, writerPort }, {});
  // Callback URLs of wait-for-event nodes: the state dir's key, and serve's origin once it listens.
  let origin: string | undefined;
  const host = new LocalHost({
    validatedDefinitions: FileDefinitionMemo.inStateDir(stateDir),
    callbacks: localCallbacks(stateDir, process.env, () => origin),
    store,
    blobs,
    memo,
    // Flow control's keys in the state dir's database, which serve's other threads and processes share; a slot
    // freed here and handed to a waiting run starts that run through the pool at once (a later wake-up is serve's tick).
    flow: { store: flow, ...(leaseMarginMs === undefined ? {} : { leaseMarginMs }) },
    wakeups: { schedule: async (request) => (request.at <= Date.now() ? post({ type: 'wake', request }) : undefined) },
    makeRepairHandler: lazyRepairHandler,
    cache: EngineCache.forConcurrentRuns(runsPerWorker),
    // The main thread wakes the long-polls waiting on a run and tells its telemetry (log lines, metrics) what runs do.
    onWrite: (write) => {
      const runId =
        write.kind === 'run' ? write.run.runId : write.kind === 'step' ? write.step.runId : (write.kind === 'steps' ? write.steps : write.events)[0]?.runId;
      if (runId !== undefined) post({ type: 'written', runId });
    },
    telemetry: { observer: { observe: (observations) => post({ type: 'observed', observations: observations.map(withLightRun) }) }, traced: false },
  });
  const launcher = new LocalRunLauncher(host, (message, fields) => post({ type: 'log', message, ...(fields ? { fields } : {}) }));
  port.on('message', (message: ToWorker) => {
    if (message.type === 'launch') {
      const { type: _type, ...request } = message;
      void launcher.launch(request).then(() => launcher.whenDone(message.owner.id).then(() => post({ type: 'done', ownerId: message.owner.id })));
    } else if (message.type === 'origin') {
      origin = message.origin;
    } else {
      void launcher.stop({ id: message.ownerId, since: 0 }).then(() => post({ type: 'stopped', ownerId: message.ownerId }));
    }
  });
  post({ type: 'ready' });
};

if (parentPort) void serveRuns(parentPort);
