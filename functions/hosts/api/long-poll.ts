import type { StoreWrite } from '../../adapters/observed-run-store.ts';

/** One long-poll's interest in one run, taken before it reads, so that a write during its read is not missed. */
export interface RunWatch {
  /** Resolves at once if the run was written since the watch began, else at its next write, after `ms`, or when `signal` aborts. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  close(): void;
}

class Watch implements RunWatch {
  private written = false;
  private wake: (() => void) | undefined;

  constructor(private readonly unwatch: (watch: Watch) => void) {}

  fire(): void {
    this.written = true;
    this.wake?.();
  }

  wait(ms: number, signal?: AbortSignal): Promise<void> {
    if (this.written || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  close(): void {
    this.wake?.();
    this.unwatch(this);
  }
}

/**
 * Tells the long-polls of `flowmend serve` (a run's events, the viewer's page) that this process wrote a
 * run, so that they read again at once instead of at their next poll. The runs serve drives write through
 * its own store, so their progress reaches a waiting client as soon as it is committed. A write by another
 * process on the same state dir (a `flowmend run` in a terminal) is still seen at the next poll: SQLite
 * tells no one. Only the runs someone waits on are kept, and only while they wait.
 */
export class StoreChanges {
  private readonly watches = new Map<string, Set<Watch>>();

  /** Every run a write of the store touched (a batch of records or events may hold several). */
  noteWrite(write: StoreWrite): void {
    if (this.watches.size === 0) return;
    const runIds = new Set<string>();
    if (write.kind === 'run') runIds.add(write.run.runId);
    else if (write.kind === 'step') runIds.add(write.step.runId);
    else for (const item of write.kind === 'steps' ? write.steps : write.events) runIds.add(item.runId);
    for (const runId of runIds) this.noteRun(runId);
  }

  /** A write of `runId` (serve's worker threads tell it so). */
  noteRun(runId: string): void {
    for (const watch of this.watches.get(runId) ?? []) watch.fire();
  }

  watch(runId: string): RunWatch {
    const watch = new Watch((done) => {
      const set = this.watches.get(runId);
      set?.delete(done);
      if (set?.size === 0) this.watches.delete(runId);
    });
    const set = this.watches.get(runId) ?? new Set<Watch>();
    set.add(watch);
    this.watches.set(runId, set);
    return watch;
  }

  /** How many runs are watched now (for tests: a closed watch leaves nothing behind). */
  get watchedRuns(): number {
    return this.watches.size;
  }
}

const pollOnly: RunWatch = {
  wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  close: () => {},
};

/** A long-poll's watch of `runId`: woken by `changes` when this process has them (serve), else a plain wait. */
export const watchRun = (changes: StoreChanges | undefined, runId: string): RunWatch => changes?.watch(runId) ?? pollOnly;

export interface LongPoll {
  changes?: StoreChanges | undefined;
  pollMs: number;
  /** When to stop waiting (ms on `now`'s clock). */
  until: number;
  now: () => number;
  signal: AbortSignal;
}

/**
 * Reads `runId` until `done` says the read is worth answering, `until` passes or the client leaves; between
 * reads it waits for the run's next write in this process (serve) or `pollMs`. The watch is taken before
 * each read, so a write during the read is not missed. Returns the last read.
 */
export const pollRun = async <T>(runId: string, poll: LongPoll, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
  for (;;) {
    const watch = watchRun(poll.changes, runId);
    try {
      const value = await read();
      if (done(value) || poll.now() >= poll.until || poll.signal.aborted) return value;
      await watch.wait(Math.min(poll.pollMs, poll.until - poll.now()), poll.signal);
    } finally {
      watch.close();
    }
  }
};
