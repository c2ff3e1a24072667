import { describe, expect, it } from 'vitest';
import { classifyOutcome } from '../../functions/core/classify.ts';
import { advanceRun } from '../../functions/core/engine.ts';
import { EngineCache } from '../../functions/core/engine-cache.ts';
import { sequentialIds } from '../../functions/core/ids.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { parseWorkflow } from '../../functions/core/parse-workflow.ts';
import { LAMBDA_THROTTLED } from '../../functions/core/retry-policy.ts';
import { createRun } from '../../functions/core/run-lifecycle.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

/** What Step Functions' Catch puts at $.error once a runner Task was throttled through every retry. */
const throttled = { Error: LAMBDA_THROTTLED, Cause: 'Rate Exceeded. (Service: Lambda, Status Code: 429)' };

describe('a runner Lambda throttled through every retry', () => {
  it('did not run: nothing is recorded, and the run is interrupted (resumable), not failed without repair', async () => {
    const store = new MemoryRunStore();
    const parsed = parseWorkflow({ nodes: [{ id: 'send', type: 'shell', params: { command: 'echo sent' } }] });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    await createRun(store, {
      runId: 'throttled-1',
      workflow: parsed.workflow,
      workflowName: 'w',
      params: {},
      owner: { id: 'o', since: 0 },
      repairEnabled: true,
      maxRepairs: 3,
      now: 0,
    });
    const deps = { store, catalog: builtinCatalog, now: () => 1_000, cache: new EngineCache(), ids: sequentialIds() };
    const started = await advanceRun({ kind: 'start', runId: 'throttled-1', owner: 'o' }, deps);
    if (started.kind !== 'run') throw new Error(`expected a run step, got ${started.kind}`);
    const outcome = await advanceRun({ ...started, error: throttled }, deps);
    expect(outcome.kind).toBe('failed');
    const run = await store.getRun('throttled-1');
    expect(run).toMatchObject({ status: 'interrupted', lastError: { category: 'transient', code: 'RUNNER_THROTTLED', node_id: 'send' } });
    expect(run?.lastError?.message).toMatch(/did not run: the shell runner Lambda was throttled/);
    expect(run?.current).toBeUndefined();
    expect(await store.listRecords('throttled-1')).toEqual([]);
    expect(run?.repairAttempts).toBe(0);
  });

  it('fails a batch item as transient, saying it did not run (a resume runs it again)', () => {
    const outcome = classifyOutcome({ nodeId: 'each', nodeType: 'http', taskError: throttled });
    expect(outcome).toMatchObject({ kind: 'fatal', error: { category: 'transient', code: 'RUNNER_THROTTLED', fixable: false } });
  });
});
