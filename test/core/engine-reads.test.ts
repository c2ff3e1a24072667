import { describe, expect, it } from 'vitest';
import { advanceRun } from '../../functions/core/engine.ts';
import { EngineCache } from '../../functions/core/engine-cache.ts';
import { sequentialIds } from '../../functions/core/ids.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { parseWorkflow } from '../../functions/core/parse-workflow.ts';
import { createRun } from '../../functions/core/run-lifecycle.ts';
import type { RunStore } from '../../functions/core/run-store.ts';
import type { AdvanceOutcome } from '../../functions/core/state-io.ts';
import { makeRunNodeHandler } from '../../functions/hosts/lambda/run-node.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';

const READS = ['getRun', 'getIrVersion', 'getRecords', 'listRecords', 'listEvents', 'listRuns'] as const;

/** The store with a count of its read calls; the engine and the real transform runner drive it. */
const countingStore = (): { store: RunStore; reads: () => number } => {
  const inner = new MemoryRunStore();
  let reads = 0;
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if ((READS as readonly string[]).includes(String(name))) reads += 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, reads: () => reads };
};

/** A chain of transform nodes, each reading the previous node's output. */
const chain = (length: number) => ({
  nodes: Array.from({ length }, (_, i) => ({
    id: `n${i}`,
    type: 'transform',
    params: i === 0 ? { expression: '1' } : { expression: '$ + 1', input: `\${n${i - 1}.result}` },
  })),
  edges: Array.from({ length: length - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});

/** Runs the workflow step by step; returns the store reads of each Advance call. */
const readsPerAdvance = async (length: number): Promise<number[]> => {
  const { store, reads } = countingStore();
  const cache = new EngineCache();
  const deps = { store, catalog: builtinCatalog, now: () => 1_000, cache, ids: sequentialIds() };
  const runId = `reads-${length}`;
  const parsed = parseWorkflow(chain(length));
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  await createRun(store, {
    runId,
    workflow: parsed.workflow,
    workflowName: 'chain',
    params: {},
    owner: { id: 'o', since: 0 },
    repairEnabled: false,
    maxRepairs: 0,
    now: 0,
  });
  const runNode = makeRunNodeHandler(transformRunner);
  const perAdvance: number[] = [];
  let input: Record<string, unknown> = { kind: 'start', runId, owner: 'o' };
  for (let turn = 0; turn < length + 2; turn++) {
    const before = reads();
    const outcome: AdvanceOutcome = await advanceRun(input, deps);
    perAdvance.push(reads() - before);
    if (outcome.kind !== 'run') {
      expect(outcome.kind).toBe('done');
      return perAdvance;
    }
    input = { ...outcome, result: await runNode(outcome) };
  }
  throw new Error('the run did not finish');
};

describe('store reads of one engine step (DESIGN section 4: O(1))', () => {
  it('reads the same small number of items per step whatever the length of the run', async () => {
    const short = await readsPerAdvance(3);
    const long = await readsPerAdvance(24);
    // The first Advance reads the run item and its workflow; after it, the cache proves them current.
    expect(short[0]).toBe(2);
    expect(long[0]).toBe(2);
    expect(Math.max(...long.slice(1))).toBe(Math.max(...short.slice(1)));
    expect(Math.max(...long.slice(1))).toBeLessThanOrEqual(1);
  });
});
