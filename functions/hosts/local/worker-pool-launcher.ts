import { type MessagePort, Worker } from 'node:worker_threads';
import { findBuiltFile } from '../../adapters/built-file.ts';
import type { LaunchRequest, Owner, RunLauncher, RunObservation, RunStore } from '../../core/index.ts';
import { claimRun } from '../../core/index.ts';
import { launchWake } from './flow-wakeups.ts';
import { isLocalOwnerAlive } from './local-host.ts';
import { LocalRunLauncher } from './local-launcher.ts';
import type { FromWorker, ServeWorkerData, ToWorker } from './serve-worker.ts';

/** Runs whose last worker the pool remembers (a resume or wake-up of one goes back to it). */
const MAX_REMEMBERED_DRIVERS = 10_000;

/**
 * The young generation of each worker's heap, capped: V8 sizes it per isolate for a process that has the
 * machine to itself (up to 3 x 16 MiB each here), and under load every worker grew it to the full size.
 * At 8 MiB, 200 runs of 10 steps with two workers peaked at 166 MiB of RSS against 214, and took less CPU
 * a step (1.29 ms against 1.45: short-lived objects are scavenged while still in cache); 4 MiB saved 8 MiB
 * more and cost runs a second (bench/serve-throughput.ts, alternated in one sitting). Old generation: V8's default.
 */
const WORKER_YOUNG_GENERATION_MB = 8;

/** The serve worker's file, or undefined where none is shipped (serve then drives runs in its own thread). */
export const findServeWorkerFile = (): string | undefined => findBuiltFile('serve-worker.cjs', import.meta.url, '../../../');

export interface WorkerPoolOptions {
  stateDir: string;
  /** The serve worker's file (findServeWorkerFile). */
  file: string;
  workers: number;
  /** Runs one worker drives at once; the others wait their turn, in the order they came. */
  runsPerWorker: number;
  /** How long after a holder of a concurrency slot was last heard of its slot is freed, past its node's worst case (flowLeaseFrom). */
  leaseMarginMs?: number;
  /** A port to serve's writer thread for each worker started (sqlite-writer-thread.ts); absent or undefined, a worker commits its own writes. */
  writerPort?: () => MessagePort | undefined;
  /** serve's own store: a run whose worker died is claimed through it before another worker drives it on. */
  store: RunStore;
  /** A worker wrote this run (serve wakes the long-polls waiting on it). */
  onWritten: (runId: string) => void;
  /** What the runs did, for serve's telemetry (log lines, metrics, traces). */
  observe: (observations: readonly RunObservation[]) => void;
  log: (message: string, fields?: Record<string, unknown>) => void;
  now?: () => number;
}

interface Slot {
  index: number;
  worker: Worker;
  /** The runs this worker drives, by owner id. */
  owners: Map<string, LaunchRequest>;
}

/**
 * The launcher of `flowmend serve` on every core: runs are driven in worker threads, each with its own
 * interpreter, local host and connection to the state dir's SQLite file, while the API answers from the
 * main thread. A run is driven by one worker at a time (its owner, written by the main thread, names it);
 * each worker drives at most `runsPerWorker` runs at once, the rest wait in order. A worker that dies
 * (a crash, or `terminateWorker`) is replaced, and the runs it drove are claimed anew and driven on from
 * their last durable step, as a restarted serve resumes its own.
 */
export class WorkerPoolLauncher implements RunLauncher {
  private readonly slots: Slot[] = [];
  private readonly queue: LaunchRequest[] = [];
  private readonly stopping = new Map<string, () => void>();
  private readonly idle: (() => void)[] = [];
  /**
   * Which worker last drove each recent run: a resume or a wake-up goes back to it when it has room, where the
   * engine's caches still hold the run's workflow and node outputs (another worker reads and parses them all
   * from the store).
   */
  private readonly lastDriver = new Map<string, number>();
  private readonly now: () => number;
  private closing = false;
  private origin: string | undefined;

  constructor(private readonly options: WorkerPoolOptions) {
    this.now = options.now ?? Date.now;
    for (let index = 0; index < Math.max(1, options.workers); index += 1) this.slots.push(this.start(index));
  }

  newOwner(runId: string, now: number): Owner {
    return LocalRunLauncher.serveOwner(runId, now);
  }

  async launch(request: LaunchRequest): Promise<void> {
    this.queue.push(request);
    this.dispatch();
  }

  async isAlive(owner: Owner): Promise<boolean> {
    if (this.queue.some((r) => r.owner.id === owner.id) || this.slots.some((s) => s.owners.has(owner.id))) return true;
    if (owner.pid === process.pid) return false;
    return isLocalOwnerAlive(owner);
  }

  async stop(owner: Owner): Promise<void> {
    const queued = this.queue.findIndex((r) => r.owner.id === owner.id);
    if (queued >= 0) {
      this.queue.splice(queued, 1);
      this.settleIfIdle();
      return;
    }
    const slot = this.slots.find((s) => s.owners.has(owner.id));
    if (!slot) return;
    await new Promise<void>((resolve) => {
      this.stopping.set(owner.id, resolve);
      this.post(slot, { type: 'stop', ownerId: owner.id });
    });
  }

  /** serve's origin, once it listens: the base of the callback URLs its workers' runs make. */
  setOrigin(origin: string): void {
    this.origin = origin;
    for (const slot of this.slots) this.post(slot, { type: 'origin', origin });
  }

  /** Waits until no run is driven or waiting (tests and shutdown). */
  async settle(): Promise<void> {
    if (this.busy()) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  /** Ends a worker at once, wherever it is, as a crash of its thread would (tests). */
  async terminateWorker(index: number): Promise<void> {
    await this.slots[index]?.worker.terminate();
  }

  /** Stops every worker; runs still going stay durable and `running`, for the next serve to resume. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }

  private start(index: number): Slot {
    const { stateDir, runsPerWorker, leaseMarginMs } = this.options;
    const writerPort = this.options.writerPort?.();
    const data: ServeWorkerData = {
      stateDir,
      runsPerWorker,
      ...(leaseMarginMs === undefined ? {} : { leaseMarginMs }),
      ...(writerPort === undefined ? {} : { writerPort }),
    };
    const worker = new Worker(this.options.file, {
      workerData: data,
      transferList: writerPort === undefined ? [] : [writerPort],
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const slot: Slot = { index, worker, owners: new Map() };
    // A worker started after serve listens (a replacement) learns its origin at once.
    if (this.origin !== undefined) this.post(slot, { type: 'origin', origin: this.origin });
    worker.on('message', (messages: readonly FromWorker[]) => {
      for (const message of messages) this.receive(slot, message);
    });
    worker.on('error', (error) => this.options.log(`serve worker ${index} failed: ${error.stack ?? error.message}`, { level: 'ERROR' }));
    worker.once('exit', (code) => void this.replace(slot, code));
    return slot;
  }

  private receive(slot: Slot, message: FromWorker): void {
    switch (message.type) {
      case 'ready':
        return;
      case 'written':
        this.options.onWritten(message.runId);
        return;
      case 'observed':
        this.options.observe(message.observations);
        return;
      case 'log':
        this.options.log(message.message, { ...message.fields, worker: slot.index });
        return;
      case 'wake':
        void launchWake(this, message.request);
        return;
      case 'done': {
        const runId = slot.owners.get(message.ownerId)?.runId;
        if (runId !== undefined) {
          this.lastDriver.delete(runId);
          if (this.lastDriver.size >= MAX_REMEMBERED_DRIVERS) this.lastDriver.delete(this.lastDriver.keys().next().value as string);
          this.lastDriver.set(runId, slot.index);
        }
        slot.owners.delete(message.ownerId);
        this.dispatch();
        return;
      }
      case 'stopped':
        this.stopping.get(message.ownerId)?.();
        this.stopping.delete(message.ownerId);
        return;
    }
  }

  /** Hands waiting runs, in order, to the worker that drove them last when it has room, else to the least busy one. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      const request = this.queue[0] as LaunchRequest;
      const last = this.slots[this.lastDriver.get(request.runId) ?? -1];
      const slot = last && last.owners.size < this.options.runsPerWorker ? last : this.slots.reduce((best, s) => (s.owners.size < best.owners.size ? s : best));
      if (slot.owners.size >= this.options.runsPerWorker) break;
      this.queue.shift();
      slot.owners.set(request.owner.id, request);
      // A created run's workflow crosses too (a structured clone): the worker does not read it back.
      this.post(slot, { type: 'launch', ...request });
    }
    this.settleIfIdle();
  }

  private post(slot: Slot, message: ToWorker): void {
    slot.worker.postMessage(message);
  }

  private busy(): boolean {
    return this.queue.length > 0 || this.slots.some((s) => s.owners.size > 0);
  }

  private settleIfIdle(): void {
    if (!this.busy()) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** A worker stopped: a new one takes its place, and its runs are claimed anew and queued first, in their order. */
  private async replace(slot: Slot, code: number): Promise<void> {
    if (this.closing) return;
    const orphans = [...slot.owners.values()];
    this.options.log(`serve worker ${slot.index} stopped (exit code ${code}); ${orphans.length} of its runs go on in a new one`, { level: 'WARN' });
    const fresh = this.start(slot.index);
    this.slots[slot.index] = fresh;
    for (const orphan of orphans) {
      this.stopping.get(orphan.owner.id)?.();
      this.stopping.delete(orphan.owner.id);
    }
    const relaunched: LaunchRequest[] = [];
    for (const orphan of orphans) {
      const request = await this.reclaim(orphan);
      if (request) relaunched.push(request);
    }
    this.queue.unshift(...relaunched);
    this.dispatch();
  }

  /** Claims a run its dead worker drove, when it is still running under that worker's owner (not cancelled, not ended). */
  private async reclaim(orphan: LaunchRequest): Promise<LaunchRequest | undefined> {
    try {
      const run = await this.options.store.getRun(orphan.runId);
      if (run?.status !== 'running' || run.owner?.id !== orphan.owner.id) return undefined;
      const now = this.now();
      const owner = this.newOwner(orphan.runId, now);
      await claimRun(this.options.store, orphan.runId, { owner, now, isAlive: async (o) => o.id !== orphan.owner.id && (await this.isAlive(o)) });
      this.options.log(`run ${orphan.runId} resumed (its worker stopped)`, { run_id: orphan.runId });
      return { runId: orphan.runId, owner, mode: run.mode };
    } catch (error) {
      this.options.log(`run ${orphan.runId} was not resumed: ${(error as Error).message}`, { run_id: orphan.runId, level: 'WARN' });
      return undefined;
    }
  }
}
