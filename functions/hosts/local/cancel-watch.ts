import type { RunStore } from '../../core/index.ts';

/**
 * Stops the node a run is running when the run is cancelled or taken over, so that its command does not
 * finish (and write its side effect) after the cancel: a cancel in this process (`serve`'s API) aborts
 * at once through the drive's signal; one from another process (`flowmend cancel` beside a
 * `flowmend run`) is read from the store every `pollMs` while a node runs (one run-item read; a node
 * shorter than that reads nothing). The shared store is the one channel every local process has, where a
 * signal to the owner's pid would need that pid to be ours still and every driving process to handle it.
 */
export class CancelWatch {
  /**
   * The controller of each node call in progress, by the event its handler was called with (the runner reads its
   * signal through RunNodeOptions.signal). Not an AsyncLocalStorage: one in the process turns on async_hooks' promise
   * tracking for every promise, ~0.04 ms of a step's CPU (~10 % of the engine's own on an in-memory store). Node
   * makes a controller's AbortSignal when it is first read (or the controller aborts): a runner that never reads it
   * (a transform's) makes none, ~10 us of a step of serve's here.
   */
  private readonly controllers = new WeakMap<object, AbortController>();
  private readonly running = new Map<string, Set<AbortController>>();

  constructor(
    private readonly store: RunStore,
    private readonly pollMs: number,
  ) {}

  readonly signal = (event: unknown): AbortSignal | undefined =>
    typeof event === 'object' && event !== null ? this.controllers.get(event)?.signal : undefined;

  /** Whether a node of the run is running in this process. */
  busy(runId: string): boolean {
    return (this.running.get(runId)?.size ?? 0) > 0;
  }

  /** Stops every node of the run running in this process (a cancel made here). */
  stop(runId: string): void {
    for (const controller of this.running.get(runId) ?? []) controller.abort();
  }

  /** Runs one node call (its handler called with `event`) with a signal that the run's cancel (or takeover) aborts. */
  async watch<T>(runId: string, owner: string, event: object, call: () => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const calls = this.running.get(runId) ?? new Set<AbortController>();
    calls.add(controller);
    this.running.set(runId, calls);
    let reading = false;
    const poll = setInterval(() => {
      if (reading) return;
      reading = true;
      this.store
        .getRun(runId)
        .then((run) => {
          if (run === undefined || run.status === 'cancelled' || run.owner?.id !== owner) controller.abort();
        })
        .catch(() => undefined)
        .finally(() => {
          reading = false;
        });
    }, this.pollMs);
    try {
      this.controllers.set(event, controller);
      return await call();
    } finally {
      this.controllers.delete(event);
      clearInterval(poll);
      calls.delete(controller);
      if (calls.size === 0) this.running.delete(runId);
    }
  }
}
