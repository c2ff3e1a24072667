import { describe, expect, it } from 'vitest';
import { advanceRun } from '../../../functions/core/engine.ts';
import { EngineCache } from '../../../functions/core/engine-cache.ts';
import { sequentialIds } from '../../../functions/core/ids.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { createRun } from '../../../functions/core/run-lifecycle.ts';
import type { AdvanceOutcome, RepairReport } from '../../../functions/core/state-io.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';
import { wf } from './support.ts';

const RUN = 'run-loop-1';
const OWNER = 'owner-1';

/**
 * The engine (Advance) settling Repair reports for a run whose workflow does not validate: each refused
 * report is recorded and the next attempt starts at once, until maxRepairs.
 */
const refuseEveryAttempt = async (maxRepairs: number, report: RepairReport) => {
  const store = new MemoryRunStore();
  const deps = { store, catalog: builtinCatalog, now: () => 1_000, cache: new EngineCache(), ids: sequentialIds() };
  const broken = wf({ nodes: [{ id: 'a', type: 'shell', params: { comand: 'echo hi' } }] });
  await createRun(store, {
    runId: RUN,
    workflow: broken,
    workflowName: 'loop',
    params: {},
    owner: { id: OWNER, since: 0 },
    repairEnabled: true,
    maxRepairs,
    now: 0,
  });
  let outcome: AdvanceOutcome = await advanceRun({ kind: 'start', runId: RUN, owner: OWNER }, deps);
  let attempts = 0;
  while (outcome.kind === 'repair') {
    attempts += 1;
    expect(outcome.attempt).toBe(attempts);
    outcome = await advanceRun({ ...outcome, repair: report }, deps);
  }
  return { outcome, attempts, run: await store.getRun(RUN) };
};

describe('the repair loop (repair-loop.ts)', () => {
  it('starts the next attempt after a refused proposal, without calling it "the same error", until maxRepairs', async () => {
    const { outcome, attempts, run } = await refuseEveryAttempt(3, {
      applied: false,
      message: 'refused: it changes nothing',
      problems: ['the proposal changes nothing'],
    });
    expect(attempts).toBe(3);
    expect(outcome).toMatchObject({
      kind: 'failed',
      error: { message: expect.stringContaining('gave up after 3 repair attempt(s); attempt 3 was refused: refused: it changes nothing') },
    });
    expect(run?.repairs.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'refused'],
      [2, 'refused'],
      [3, 'refused'],
    ]);
  });

  it('fails the run after a failed attempt (no proposal could be made)', async () => {
    const { outcome, attempts, run } = await refuseEveryAttempt(3, { applied: false, message: 'an LLM repair needs ANTHROPIC_API_KEY' });
    expect(attempts).toBe(1);
    expect(outcome).toMatchObject({
      kind: 'failed',
      error: { message: expect.stringContaining('repair attempt 1 failed: an LLM repair needs ANTHROPIC_API_KEY') },
    });
    expect(run?.repairs).toEqual([expect.objectContaining({ attempt: 1, outcome: 'failed' })]);
  });

  it('keeps the run item small: each attempt clipped, the last 20 kept', async () => {
    const problems = Array.from({ length: 12 }, (_, i) => `problem ${i}: ${'x'.repeat(1_000)}`);
    const { attempts, run } = await refuseEveryAttempt(25, { applied: false, message: 'y'.repeat(5_000), problems });
    expect(attempts).toBe(25);
    expect(run?.repairs.map((a) => a.attempt)).toEqual(Array.from({ length: 20 }, (_, i) => i + 6));
    const last = run?.repairs.at(-1);
    expect(last?.reason.length).toBeLessThanOrEqual(601);
    expect(last?.problems).toHaveLength(6);
    expect(last?.problems?.at(-1)).toBe('… and 7 more');
    expect(JSON.stringify(run?.repairs).length).toBeLessThan(20 * 2_500);
  });
});
