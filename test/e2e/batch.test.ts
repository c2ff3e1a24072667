import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import { parseWorkflow } from '../../functions/core/parse-workflow.ts';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { makeTempDir } from '../support/cli-process.ts';

const root = makeTempDir('batch');
const store = SqliteRunStore.open(join(root, 'state'));
afterAll(() => store.close());

let runs = 0;
const start = (host: LocalHost, workflow: WorkflowInput, params: Record<string, unknown> = {}) => {
  const parsed = parseWorkflow(workflow);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  runs += 1;
  return host.start({ workflow: parsed.workflow, workflowName: `batch-${runs}`, params, repairEnabled: false, maxRepairs: 0, runId: `batch-run-${runs}` });
};

/** How many times each item's side effect happened, by index (one line `<index>` per run of an item). */
const sideEffects = (file: string): Record<number, number> => {
  const counts: Record<number, number> = {};
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n').filter(Boolean)) counts[Number(line)] = (counts[Number(line)] ?? 0) + 1;
  return counts;
};
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

describe('batch through the local host', () => {
  it('fail-fast: item 13 of 20 fails; after the fix, resume replays items 0-12 and runs 13-19, each side effect once', async () => {
    const dir = makeTempDir('batch-fail-fast');
    const host = new LocalHost({ store });
    const items = range(0, 20).map((i) => `f${i}`);
    const workflow: WorkflowInput = {
      nodes: [
        {
          id: 'each',
          type: 'shell',
          params: { command: `if [ \${__index__} = 13 ] && [ ! -f ${dir}/fixed ]; then echo broken >&2; exit 3; fi; echo \${__index__} >> ${dir}/side; printf '%s' \${item}` },
          batch: { items },
        },
        { id: 'after', type: 'transform', params: { expression: '$count(results)', input: '${each}' } },
      ],
      edges: [{ from: 'each', to: 'after' }],
      outputs: { done: { source: '${after.result}' }, last: { source: '${each.results[19].stdout}' } },
    };
    const first = await start(host, workflow);
    expect(first).toMatchObject({ success: false, status: 'failed' });
    expect(first.errors[0]).toMatchObject({ node_id: 'each', code: 'BATCH_ITEM_FAILED', message: expect.stringContaining('item 13 of 20 failed') });
    expect(sideEffects(join(dir, 'side'))).toEqual(Object.fromEntries(range(0, 13).map((i) => [i, 1])));

    writeFileSync(join(dir, 'fixed'), '');
    const resumed = await host.resume(first.run_id);
    expect(resumed).toMatchObject({ success: true, result: { done: 20, last: 'f19' } });
    expect(sideEffects(join(dir, 'side'))).toEqual(Object.fromEntries(range(0, 20).map((i) => [i, 1])));
    const batchStep = resumed.steps.filter((s) => s.node_id === 'each').at(-1);
    expect(batchStep).toMatchObject({ status: 'completed' });
  });
});
