import type { LaunchRequest, Owner, RunLauncher } from '../../core/index.ts';
import { StaleRunError } from '../../core/index.ts';
import { isLocalOwnerAlive, type LocalHost, localOwner } from './local-host.ts';

/** Owners of runs that `flowmend serve` drives start with it, so a restarted serve knows which runs are its own. */
export const SERVE_OWNER_PREFIX = 'serve-';

/**
 * The launcher of `flowmend serve`: drives each run in the background of this process on the local host.
 * An owner is alive while this process drives it, or while the other local process named in it lives.
 */
export class LocalRunLauncher implements RunLauncher {
  private readonly running = new Map<string, { abort: AbortController; done: Promise<void> }>();

  constructor(
    private readonly host: LocalHost,
    private readonly log: (message: string, fields?: Record<string, unknown>) => void = () => {},
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
    const abort = new AbortController();
    const done = this.host
      .driveLaunched(request, abort.signal)
      .then((status) => this.log(`run ${request.runId} ${status ?? 'vanished from the store'}`, { run_id: request.runId }))
      .catch((error: unknown) => {
        // A cancel or a takeover moved the owner: the execution stops, as it does on AWS.
        if (error instanceof StaleRunError) this.log(`run ${request.runId}: execution stopped (${error.message})`, { run_id: request.runId });
        else this.log(`run ${request.runId}: execution failed: ${(error as Error).stack ?? String(error)}`, { run_id: request.runId, level: 'ERROR' });
      })
      .finally(() => this.running.delete(request.owner.id));
    this.running.set(request.owner.id, { abort, done });
  }

  async isAlive(owner: Owner): Promise<boolean> {
    if (this.running.has(owner.id)) return true;
    if (owner.pid === process.pid) return false;
    return isLocalOwnerAlive(owner);
  }

  async stop(owner: Owner): Promise<void> {
    const execution = this.running.get(owner.id);
    if (!execution) return;
    execution.abort.abort();
    await execution.done;
  }

  /** Resolves when the execution of `ownerId` stopped (at once when none runs). */
  async whenDone(ownerId: string): Promise<void> {
    await this.running.get(ownerId)?.done;
  }

  /** Waits for every run this process drives to stop (tests and shutdown). */
  async settle(): Promise<void> {
    await Promise.all([...this.running.values()].map((r) => r.done));
  }
}
