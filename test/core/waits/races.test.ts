import { describe, expect, it } from 'vitest';
import { EngineCache } from '../../../functions/core/engine-cache.ts';
import { WaitNotOpenError } from '../../../functions/core/errors.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import type { RunItem } from '../../../functions/core/run-model.ts';
import { answerWait } from '../../../functions/core/waits/answer-wait.ts';
import { hashCallbackToken } from '../../../functions/core/waits/callback-token.ts';
import { claimWake } from '../../../functions/core/waits/claim-wake.ts';
import { aRun } from '../../support/builders.ts';

const NOW = Date.parse('2026-11-01T00:00:00Z');
const TOKEN = 'A'.repeat(43);

const waitingRun = (wait: NonNullable<RunItem['wait']>): RunItem =>
  aRun({
    runId: 'waiting-run',
    status: 'waiting',
    wait,
    owner: { id: 'paused-by', since: NOW },
    current: { seq: 1, nodeId: wait.nodeId ?? 'n', nodeType: 'wait', visit: 1, cacheKey: 'k', sideEffects: false, startedAt: NOW },
    seq: 1,
  });

const deps = (store: MemoryRunStore, now: number) => ({ store, catalog: new Map(), now: () => now, cache: new EngineCache() });

describe('waking a waiting run (DESIGN 7b)', () => {
  it('of two wake-ups that read the run at the same moment, exactly one claims it; the other ends idle', async () => {
    const store = new MemoryRunStore();
    await store.putRun(waitingRun({ kind: 'time', id: 'w1', since: NOW, nodeId: 'pause', until: NOW + 1000 }), { notExists: true });
    const wake = (owner: string) => claimWake({ kind: 'wake', runId: 'waiting-run', owner, waitId: 'w1' }, deps(store, NOW + 1000));
    const results = await Promise.all([wake('a'), wake('b'), wake('c')]);
    expect(results.map((r) => r.kind).sort()).toEqual(['claimed', 'idle', 'idle']);
    const run = await store.getRun('waiting-run');
    expect(run?.status).toBe('running');
    expect(run?.wait?.answer?.outcome).toBe('due');
    expect((await store.listEvents('waiting-run')).filter((e) => e.type === 'run_woken')).toHaveLength(1);
  });

  it('does nothing for a wait that is not due, another wait, or a cancelled run', async () => {
    const store = new MemoryRunStore();
    await store.putRun(waitingRun({ kind: 'time', id: 'w1', since: NOW, nodeId: 'pause', until: NOW + 60_000 }), { notExists: true });
    const early = await claimWake({ kind: 'wake', runId: 'waiting-run', owner: 'a', waitId: 'w1' }, deps(store, NOW + 10_000));
    expect(early).toMatchObject({ kind: 'idle', outcome: { reason: expect.stringContaining('neither answered nor due') } });
    const other = await claimWake({ kind: 'wake', runId: 'waiting-run', owner: 'a', waitId: 'w0' }, deps(store, NOW + 60_000));
    expect(other).toMatchObject({ kind: 'idle', outcome: { reason: expect.stringContaining('something else') } });
    const run = (await store.getRun('waiting-run')) as RunItem;
    await store.putRun({ ...run, status: 'cancelled' }, { ownerId: 'paused-by' });
    const cancelled = await claimWake({ kind: 'wake', runId: 'waiting-run', owner: 'a', waitId: 'w1' }, deps(store, NOW + 60_000));
    expect(cancelled).toMatchObject({ kind: 'idle', outcome: { reason: expect.stringContaining('cancelled') } });
  });

  it('an event and its timeout that race: one answer is written, the other is refused or finds it answered', async () => {
    const store = new MemoryRunStore();
    const wait = { kind: 'event' as const, id: 'w1', since: NOW, nodeId: 'hook', tokenHash: hashCallbackToken(TOKEN), until: NOW + 1000 };
    await store.putRun(waitingRun(wait), { notExists: true });
    const [event, timeout] = await Promise.allSettled([
      answerWait(store, 'waiting-run', { kind: 'event', token: TOKEN, payload: { ok: true } }, NOW + 1000),
      claimWake({ kind: 'wake', runId: 'waiting-run', owner: 'timer', waitId: 'w1' }, deps(store, NOW + 1000)),
    ]);
    const run = (await store.getRun('waiting-run')) as RunItem;
    const answer = run.wait?.answer;
    // Either the event was recorded first (the timer's claim then continues with it), or the timer claimed a timeout first.
    if (event.status === 'fulfilled') expect(answer).toMatchObject({ outcome: 'event', payload: { ok: true } });
    else {
      expect(event.reason).toBeInstanceOf(WaitNotOpenError);
      expect(answer?.outcome).toBe('timeout');
    }
    expect(timeout.status).toBe('fulfilled');
  });

  it('of an approval and a denial given at the same moment, exactly one is recorded; the other is refused', async () => {
    const store = new MemoryRunStore();
    await store.putRun(waitingRun({ kind: 'approval', id: 'w1', since: NOW, nodeId: 'send', nodeType: 'shell', preview: {} }), { notExists: true });
    const answers = await Promise.allSettled([
      answerWait(store, 'waiting-run', { kind: 'decision', approved: true, by: 'ada' }, NOW),
      answerWait(store, 'waiting-run', { kind: 'decision', approved: false, by: 'bob' }, NOW),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual(['fulfilled', 'rejected']);
    const recorded = (await store.getRun('waiting-run'))?.wait?.answer;
    const winner = answers.findIndex((a) => a.status === 'fulfilled');
    expect(recorded?.by).toBe(winner === 0 ? 'ada' : 'bob');
    expect((await store.listEvents('waiting-run')).filter((e) => e.type === 'wait_answered')).toHaveLength(1);
  });

  it('refuses a callback whose token is forged or used already, with one message for both', async () => {
    const store = new MemoryRunStore();
    await store.putRun(waitingRun({ kind: 'event', id: 'w1', since: NOW, nodeId: 'hook', tokenHash: hashCallbackToken(TOKEN) }), { notExists: true });
    const forged = await answerWait(store, 'waiting-run', { kind: 'event', token: `B${TOKEN.slice(1)}`, payload: 1 }, NOW).catch((e: unknown) => e);
    expect(forged).toBeInstanceOf(WaitNotOpenError);
    await answerWait(store, 'waiting-run', { kind: 'event', token: TOKEN, payload: 1 }, NOW);
    const reused = await answerWait(store, 'waiting-run', { kind: 'event', token: TOKEN, payload: 2 }, NOW).catch((e: unknown) => e);
    expect(reused).toBeInstanceOf(WaitNotOpenError);
    expect((reused as Error).message).toBe((forged as Error).message);
    expect((await store.getRun('waiting-run'))?.wait?.answer?.payload).toBe(1);
  });
});
