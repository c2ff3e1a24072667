// The runs a host drives give its event loop back every slice (issue 30: serve's API stays responsive while
// its own thread drives runs whose steps await only promises, as bounded transforms do).
import { describe, expect, it } from 'vitest';
import { MemoryRunStore, parseWorkflow, type Workflow } from '../../../functions/core/index.ts';
import { LocalHost } from '../../../functions/hosts/local/local-host.ts';
import { TurnSlicer } from '../../../functions/hosts/local/turn-slicer.ts';

const chain = (length: number): Workflow => {
  const parsed = parseWorkflow({
    nodes: Array.from({ length }, (_, i) => ({ id: `n${i}`, type: 'transform', params: { expression: '$', input: i === 0 ? 0 : `\${n${i - 1}.result}` } })),
    edges: Array.from({ length: length - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.workflow;
};

describe('TurnSlicer', () => {
  it('lets steps go on within the slice, then makes each wait for a later turn, and starts a new slice there', async () => {
    let now = 0;
    const slicer = new TurnSlicer(10, () => now);
    expect(slicer.pass()).toBeUndefined();
    now = 9;
    expect(slicer.pass()).toBeUndefined();
    now = 10;
    const waiting = slicer.pass();
    expect(waiting).toBeInstanceOf(Promise);
    let resumed = false;
    void waiting?.then(() => {
      resumed = true;
    });
    await Promise.resolve();
    expect(resumed).toBe(false);
    await new Promise((resolve) => setImmediate(resolve));
    expect(resumed).toBe(true);
    // The next turn: a new slice.
    now = 11;
    expect(slicer.pass()).toBeUndefined();
  });
});

describe('a host driving many runs in its own thread', () => {
  it('lets a timer fire while they run, though no step of theirs waits for I/O', async () => {
    let writes = 0;
    const host = new LocalHost({ store: new MemoryRunStore(), onWrite: () => (writes += 1) });
    const workflow = chain(10);
    const start = () => host.start({ workflow, workflowName: 'chain', params: {}, repairEnabled: false, maxRepairs: 0 });
    await start();
    writes = 0;
    let writesWhenFired: number | undefined;
    const timer = setInterval(() => {
      writesWhenFired ??= writes;
    }, 0);
    try {
      const reports = await Promise.all(Array.from({ length: 50 }, start));
      expect(reports.every((r) => r.status === 'succeeded')).toBe(true);
    } finally {
      clearInterval(timer);
    }
    // Without the slices the 50 runs ended in one drain of the microtask queue, and the timer fired after all of it.
    expect(writesWhenFired).toBeDefined();
    expect(writesWhenFired).toBeLessThan(writes);
  });
});
