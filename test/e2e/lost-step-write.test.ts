import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { NodeRecord } from '../../functions/core/run-model.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';

/** A store whose write of one node's step item fails once, as a lost request would. */
class LosingStore extends MemoryRunStore {
  lost = 0;
  constructor(private readonly nodeToLose: string) {
    super();
  }
  override async putRecords(steps: readonly NodeRecord[]): Promise<void> {
    if (steps.some((s) => s.nodeId === this.nodeToLose) && this.lost === 0) {
      this.lost += 1;
      throw new Error('connection reset while writing the step items');
    }
    return super.putRecords(steps);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'flowmend-lost-step-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a step item lost while the run item was written', () => {
  it('resume replays the node from the record kept in the run item: it ran once', async () => {
    const workflow = WorkflowSchema.parse({
      nodes: [
        { id: 'send', type: 'shell', params: { command: `echo sent >> ${dir}/send.count; echo message-1` } },
        { id: 'after', type: 'shell', params: { command: `echo after >> ${dir}/after.count; echo got \${send.stdout}` } },
      ],
      edges: [{ from: 'send', to: 'after' }],
      outputs: { out: { source: '${after.stdout}' } },
    });
    const store = new LosingStore('send');
    // stepBatch 1, as on AWS: each record is written beside the run item of the next step.
    const first = new LocalHost({ store, stepBatch: 1 });
    // The unexpected store error is recorded as the run failing (issue 11: nothing stays `running`).
    const failed = await first.start({ workflow, workflowName: 'lost', params: {}, repairEnabled: false, maxRepairs: 0, runId: 'lost-step-1' });
    expect(failed.errors).toEqual([expect.objectContaining({ code: 'INTERNAL_ERROR', fixable: false, message: expect.stringContaining('connection reset') })]);
    expect(store.lost).toBe(1);
    expect(await store.listRecords('lost-step-1')).toEqual([]);

    const report = await new LocalHost({ store, stepBatch: 1 }).resume('lost-step-1', { force: true });
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ out: 'got message-1' });
    expect(readFileSync(join(dir, 'send.count'), 'utf8')).toBe('sent\n');
    expect(readFileSync(join(dir, 'after.count'), 'utf8')).toBe('after\n');
    expect(report.steps.find((s) => s.node_id === 'send' && s.cached)).toBeDefined();
    expect((await store.listRecords('lost-step-1')).map((s) => s.nodeId)).toEqual(['send', 'after']);
  });
});
