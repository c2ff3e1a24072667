import { describe, expect, it } from 'vitest';
import type { StoreWrite } from '../../../functions/adapters/observed-run-store.ts';
import type { NodeRecord, RunEvent, RunItem } from '../../../functions/core/index.ts';
import { StoreChanges, watchRun } from '../../../functions/hosts/api/long-poll.ts';

// Only the run ids matter to StoreChanges.
const runWrite = (runId: string): StoreWrite => ({ kind: 'run', run: { runId } as RunItem });
const eventsWrite = (...runIds: string[]): StoreWrite => ({ kind: 'events', events: runIds.map((runId) => ({ runId }) as RunEvent) });
const stepsWrite = (...runIds: string[]): StoreWrite => ({ kind: 'steps', steps: runIds.map((runId) => ({ runId }) as NodeRecord) });

/** Whether `promise` has settled once pending callbacks ran (no timers: a wake resolves at once). */
const settled = async (promise: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void promise.then(() => (done = true));
  for (let i = 0; i < 5; i += 1) await Promise.resolve();
  return done;
};

const LONG = 60_000;

describe('StoreChanges (serve wakes its long-polls at a run written in this process)', () => {
  it('wakes a wait at the next write of its run, not of another run', async () => {
    const changes = new StoreChanges();
    const watch = changes.watch('r1');
    const waiting = watch.wait(LONG);
    changes.noteWrite(runWrite('r2'));
    changes.noteWrite(eventsWrite('r2', 'r3'));
    expect(await settled(waiting)).toBe(false);
    changes.noteWrite(stepsWrite('r3', 'r1'));
    expect(await settled(waiting)).toBe(true);
    watch.close();
  });

  it('does not miss a write made between the watch and the wait (during the read)', async () => {
    const changes = new StoreChanges();
    const watch = changes.watch('r1');
    changes.noteWrite({ kind: 'step', step: { runId: 'r1' } as NodeRecord });
    expect(await settled(watch.wait(LONG))).toBe(true);
    watch.close();
  });

  it('ends a wait when the client leaves, and keeps no run once its watches are closed', async () => {
    const changes = new StoreChanges();
    const controller = new AbortController();
    const [one, two] = [changes.watch('r1'), changes.watch('r1')];
    const waiting = one.wait(LONG, controller.signal);
    expect(changes.watchedRuns).toBe(1);
    controller.abort();
    expect(await settled(waiting)).toBe(true);
    expect(await settled(one.wait(LONG, controller.signal))).toBe(true);
    one.close();
    expect(changes.watchedRuns).toBe(1);
    // Closing a watch that is waiting lets its wait go.
    const pending = two.wait(LONG);
    two.close();
    expect(await settled(pending)).toBe(true);
    expect(changes.watchedRuns).toBe(0);
    changes.noteWrite(runWrite('r1'));
  });

  it('without changes (the API on AWS), a wait is the poll interval', async () => {
    const watch = watchRun(undefined, 'r1');
    const waiting = watch.wait(20);
    expect(await settled(waiting)).toBe(false);
    await waiting;
    watch.close();
  });
});
