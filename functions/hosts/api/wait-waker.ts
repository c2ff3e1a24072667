import type { RunItem } from '../../core/index.ts';
import type { ApiDeps } from './api-deps.ts';

/** How many due waits one tick continues; the rest go on at the next tick. */
const WAKES_PER_TICK = 100;
/** A wait launched this recently is not launched again: its execution is claiming it (or failed to, and says why in the log). */
const RELAUNCH_AFTER_MS = 60_000;

/**
 * `flowmend serve`'s wake-ups (DESIGN 7b): on each tick of its clock, every waiting run that is due (its
 * deadline passed) or answered (an approval or an event that no execution took yet) gets an execution
 * that continues it. The store's index of waiting runs answers this without a scan, and it is read from
 * the store each time, so waits written by other processes, or before a restart, are woken too. The
 * execution's first step claims the run (claim-wake.ts): a wake-up racing another one does nothing.
 */
export class WaitWaker {
  private readonly launched = new Map<string, number>();

  constructor(
    private readonly deps: Pick<ApiDeps, 'store' | 'launcher'>,
    private readonly log: (message: string) => void = () => {},
  ) {}

  async tick(now: number): Promise<string[]> {
    const woken: string[] = [];
    for (const [waitId, at] of this.launched) if (now - at > RELAUNCH_AFTER_MS || now < at) this.launched.delete(waitId);
    for (const run of await this.deps.store.listWaiting({ limit: WAKES_PER_TICK, dueBy: now })) {
      const wait = run.wait;
      if (!wait || this.launched.has(wait.id)) continue;
      this.launched.set(wait.id, now);
      try {
        await this.launch(run, wait.id, now);
        woken.push(run.runId);
      } catch (error) {
        this.log(`run ${run.runId} is due but could not be continued: ${(error as Error).message}`);
      }
    }
    return woken;
  }

  private async launch(run: RunItem, waitId: string, now: number): Promise<void> {
    const owner = this.deps.launcher.newOwner(run.runId, now);
    await this.deps.launcher.launch({ runId: run.runId, owner, mode: run.mode, waitId });
  }
}
