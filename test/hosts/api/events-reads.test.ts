import { describe, expect, it } from 'vitest';
import { MemoryRegistryStore } from '../../../functions/core/memory-registry-store.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { parseWorkflow } from '../../../functions/core/parse-workflow.ts';
import { createRun } from '../../../functions/core/run-lifecycle.ts';
import type { RunStore } from '../../../functions/core/run-store.ts';
import { makeApiApp } from '../../../functions/hosts/api/app.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';

/** The store with a count of each read, as a Proxy (every method passes through). */
const counted = (inner: RunStore) => {
  const reads: Record<string, number> = {};
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        reads[String(name)] = (reads[String(name)] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, reads };
};

describe('GET /runs/{id}/events?wait= (the long-poll a follower keeps open)', () => {
  it("reads the run item at each poll and the run's events and records only when it changed, not its whole history each time", async () => {
    const { store, reads } = counted(new MemoryRunStore());
    const parsed = parseWorkflow({ nodes: [{ id: 'a', type: 'shell', params: { command: 'sleep 60' } }] });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    await createRun(store, {
      runId: 'poll-1',
      workflow: parsed.workflow,
      workflowName: 'w',
      params: {},
      owner: { id: 'o', since: 0 },
      repairEnabled: false,
      maxRepairs: 0,
      now: 0,
    });
    // This route starts nothing: a launcher that refuses to be used.
    const unused = async (): Promise<never> => {
      throw new Error('the events route started or stopped an execution');
    };
    const launcher = { newOwner: () => ({ id: 'x', since: 0 }), launch: unused, isAlive: unused, stop: unused };
    const app = makeApiApp({ store, registry: new MemoryRegistryStore(), launcher, catalog: builtinCatalog, now: Date.now, pollIntervalMs: 20 });
    // Past the page the run's creation events make: nothing new comes while the poll waits.
    const first = (await (await app.request('/runs/poll-1/events')).json()) as { cursor: string };
    for (const key of Object.keys(reads)) delete reads[key];
    const answer = await app.request(`/runs/poll-1/events?wait=1&after=${first.cursor}`);
    expect(((await answer.json()) as { events: unknown[] }).events).toEqual([]);
    expect(reads.getRun).toBeGreaterThan(10);
    expect(reads.listEvents).toBe(1);
    expect(reads.listRecords).toBe(1);
  });
});
