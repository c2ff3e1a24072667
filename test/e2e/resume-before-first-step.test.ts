import { describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { createRun } from '../../functions/core/run-lifecycle.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';

describe('resume of a run stopped before its first step', () => {
  it('starts it as new: the workflow is validated before any node runs', async () => {
    const store = new MemoryRunStore();
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'echo a' } },
        { id: 'b', type: 'shell', params: { command: 'echo ${a.stdot}' } },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    // As if the process that created the run died before the first Advance: its owner is gone.
    await createRun(store, {
      runId: 'never-started',
      workflow,
      workflowName: 'w',
      params: {},
      repairEnabled: false,
      maxRepairs: 0,
      owner: { id: 'dead', pid: 2 ** 22 + 1, host: 'elsewhere', since: 0 },
      now: Date.now(),
    });
    const report = await new LocalHost({ store }).resume('never-started', { force: true });
    expect(report.status).toBe('failed');
    expect(report.errors[0]).toMatchObject({ category: 'validation', code: 'INVALID_WORKFLOW' });
    expect(report.metrics.nodes_executed).toBe(0);
    expect(await store.listRecords('never-started')).toEqual([]);
  });
});
