import type { LaunchRequest, Owner, RunLauncher } from '../../core/index.ts';
import { StaleRunError } from '../../core/index.ts';
import { isLocalOwnerAlive, type LocalHost, localOwner } from './local-host.ts';

/** Owners of runs that `flowmend serve` drives start with it, so a restarted serve knows which runs are its own. */
export const SERVE_OWNER_PREFIX = 'serve-';

/**
 * The launcher of `flowmend serve`: drives each run in the background of this process on the local host.
 * An owner is alive while this process drives it, waits its turn here, or while the other local process
 * named in it lives. With `runsAtOnce`, at most that many runs are driven at once and the others wait their
 * turn in order (they are `running`, owned by this process: a cancel takes one out of the line, and a serve
 * that stops leaves them for the next serve to resume); without it every run is driven at once (a serve
 * worker, whose pool keeps the line).
 */
export class LocalRunLauncher implements RunLauncher {
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();
  /** Runs waiting for a turn, oldest first, each with what settles its `whenDone` once it has run. */
  private readonly waiting: { request: LaunchRequest; ran: () => void; done: Promise<void> }[] = [];

  constructor(
    private readonly host: LocalHost,
    private readonly log: (message: string, fields?: Record<string, unknown>) => void = () => {},
    private readonly runsAtOnce = Number.POSITIVE_INFINITY,
  ) {}

  newOwner(runId: string, now: number): Owner {
    return LocalRunLauncher.serveOwner(runId, now);
  }

  /** An owner of this serve process (its worker threads share its pid). */
  static serveOwner(_runId: string, now: number): Owner {
    const owner = localOwner(now);
    return { ...owner, id: `${SERVE_OWNER_PREFIX}${owner.id}` };
  }

  async launch(request: LaunchRequest): Promise<void> {
    if (this.running.size < this.runsAtOnce && this.waiting.length === 0) {
      void this.drive(request);
      return;
    }
    let ran = () => {};
    const done = new Promise<void>((resolve) => (ran = resolve));
    this.waiting.push({ request, ran, done });
    this.next();
  }

  async isAlive(owner: Owner): Promise<boolean> {
    if (this.running.has(owner.id) || this.waitingAt(owner.id) >= 0) return true;
    if (owner.pid === process.pid) return false;
    return isLocalOwnerAlive(owner);
  }

  async stop(owner: Owner): Promise<void> {
    const queued = this.waitingAt(owner.id);
    if (queued >= 0) {
      // Not started: nothing of it runs, and nothing is left to record.
      this.waiting.splice(queued, 1)[0]?.ran();
      return;
    }
    const execution = this.running.get(owner.id);
    if (!execution) return;
    execution.abort.abort();
    await execution.done;
  }

  /** Resolves when the execution of `ownerId` stopped (at once when none runs or waits). */
  async whenDone(ownerId: string): Promise<void> {
    await (this.running.get(ownerId)?.done ?? this.waiting[this.waitingAt(ownerId)]?.done);
  }

  /** Waits for every run this process drives, or has waiting, to stop (tests and shutdown). */
  async settle(): Promise<void> {
    while (this.running.size > 0 || this.waiting.length > 0) {
      await Promise.all([...this.running.values(), ...this.waiting].map((r) => r.done));
    }
  }

  /** Where the run of `ownerId` waits in the line (-1: it does not). */
  private waitingAt(ownerId: string): number {
    return this.waiting.findIndex((w) => w.request.owner.id === ownerId);
  }

  /** Starts the execution of a run; resolves when it stopped, however it did. */
  private drive(request: LaunchRequest): Promise<void> {
    const abort = new AbortController();
    const done = this.host
      .driveLaunched(request, abort.signal)
      .then((status) => this.log(`run ${request.runId} ${status ?? 'vanished from the store'}`, { run_id: request.runId }))
      .catch((error: unknown) => {
        // A cancel or a takeover moved the owner: the execution stops, as it does on AWS.
        if (error instanceof StaleRunError) this.log(`run ${request.runId}: execution stopped (${error.message})`, { run_id: request.runId });
        else this.log(`run ${request.runId}: execution failed: ${(error as Error).stack ?? String(error)}`, { run_id: request.runId, level: 'ERROR' });
      })
      .finally(() => {
        this.running.delete(request.owner.id);
        this.next();
      });
    this.running.set(request.owner.id, { abort, done });
    return done;
  }

  /** Starts waiting runs, in order, while there is room. */
  private next(): void {
    while (this.running.size < this.runsAtOnce && this.waiting.length > 0) {
      const { request, ran } = this.waiting.shift() as (typeof this.waiting)[number];
      void this.drive(request).then(ran);
    }
  }
}
