import { monotonicMs } from '../../nodes/monotonic-clock.ts';

/**
 * Gives the event loop back (to `serve`'s API, timers, other I/O) once the runs this thread drives have held it
 * for `sliceMs`: a step that evaluates in this thread (a bounded transform, a replayed node, the engine) awaits
 * only promises, so without it a burst of runs went on in one microtask drain (100 runs of 10 transforms on an
 * in-memory store: 364 ms with no timer and no request served). Past the slice, each next step waits for
 * setImmediate, which runs after the I/O the loop has pending; the slice starts again on the next turn.
 */
export class TurnSlicer {
  private started: number | undefined;

  constructor(
    private readonly sliceMs: number,
    private readonly clock: () => number = monotonicMs,
  ) {}

  /** Undefined while this turn's slice lasts (go on at once); past it, a promise that resolves on a later turn. */
  pass(): Promise<void> | undefined {
    const now = this.clock();
    if (this.started === undefined) {
      this.started = now;
      // Queued before any step that yields below, so the turn that resumes them starts a new slice.
      setImmediate(() => {
        this.started = undefined;
      });
      return undefined;
    }
    if (now - this.started < this.sliceMs) return undefined;
    return new Promise((resolve) => setImmediate(resolve));
  }
}
