import { describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';

/** A chain of transform nodes, each adding 1 to the previous result. */
const chain = (length: number) =>
  WorkflowSchema.parse({
    nodes: Array.from({ length }, (_, i) => ({ id: `n${i}`, type: 'transform', params: { expression: '$ + 1', input: i === 0 ? 0 : `\${n${i - 1}.result}` } })),
    edges: Array.from({ length: length - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
    outputs: { total: { source: `\${n${length - 1}.result}` } },
  });

/** A quick node, then one whose 40 s timeout fits in a 60 s execution, but not with its 3 retries. */
const quickThenLong = WorkflowSchema.parse({
  nodes: [
    { id: 'quick', type: 'transform', params: { expression: '"ok"' } },
    { id: 'long', type: 'shell', params: { command: 'echo done', timeout_s: 40 } },
  ],
  edges: [{ from: 'quick', to: 'long' }],
});

describe('continue as a new execution', () => {
  it('splits a long run into executions below the limit and reaches the same result', async () => {
    const limited = new LocalHost({ store: new MemoryRunStore(), executionLimits: { maxAdvances: 4, maxMs: 60_000 } });
    const report = await limited.start({ workflow: chain(10), workflowName: 'chain', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ total: 10 });
    expect(report.metrics.nodes_executed).toBe(10);
    // 11 Advance calls at most 4 per execution: the run needed 3 or more executions, none replayed anything.
    expect(limited.stats.executions).toBeGreaterThanOrEqual(3);
    expect(report.metrics.nodes_cached).toBe(0);
    expect(limited.stats.tasks.Continue).toBe(limited.stats.executions - 1);
  });

  it('hands a node that may outlast the execution to a fresh execution', async () => {
    const host = new LocalHost({ store: new MemoryRunStore(), executionLimits: { maxAdvances: 1000, maxMs: 60_000 } });
    const report = await host.start({ workflow: quickThenLong, workflowName: 'long', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(report.result).toMatchObject({ stdout: 'done' });
    // 'long' (4 tries of 40 s) cannot fit in what is left of a 60 s execution, so it starts a new one.
    expect(host.stats.executions).toBe(2);
    expect(report.metrics.nodes_executed).toBe(2);
  });

  it('does not split a Standard run for time: only Express executions are time-limited', async () => {
    const host = new LocalHost({ store: new MemoryRunStore(), executionLimits: { maxAdvances: 1000, maxMs: 60_000 } });
    const report = await host.start({ workflow: quickThenLong, workflowName: 'long', params: {}, repairEnabled: false, maxRepairs: 0, mode: 'standard' });
    expect(report.result).toMatchObject({ stdout: 'done' });
    expect(host.stats.executions).toBe(1);
  });

  it('without limits runs in one execution with 3 transitions per node', async () => {
    const host = new LocalHost({ store: new MemoryRunStore() });
    const report = await host.start({ workflow: chain(10), workflowName: 'chain', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(report.result).toEqual({ total: 10 });
    expect(host.stats.executions).toBe(1);
    // Advance+Route and Run<Type> per node, then a last Advance+Route and the Done (Succeed) state.
    expect(host.stats.transitions).toBe(10 * 3 + 3);
  });
});
