import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../../functions/core/ir.ts';
import { applyManualPatch } from '../../../functions/core/repair/index.ts';
import type { IrVersionItem, NodeRecord } from '../../../functions/core/run-model.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';
import { aNodeRecord, aRun } from '../../support/builders.ts';
import { wf } from './support.ts';

const ir = wf({
  nodes: [
    { id: 'send', type: 'shell', params: { command: 'echo sent', timeout_s: 5 } },
    { id: 'check', type: 'shell', params: { command: 'test ${send.stdout} = ok' } },
  ],
  edges: [{ from: 'send', to: 'check' }],
});

const run = aRun({ runId: 'run-manual', irVersion: 2, latest: { send: 1, check: 2 } });
const current: IrVersionItem = { runId: 'run-manual', version: 2, ir, source: 'llm', createdAt: 1 };
const steps: NodeRecord[] = [
  aNodeRecord({ runId: 'run-manual', seq: 1, nodeId: 'send', status: 'completed', irVersion: 2, outputs: { stdout: 'sent' }, startedAt: 1 }),
  aNodeRecord({ runId: 'run-manual', seq: 2, nodeId: 'check', status: 'failed', irVersion: 2, startedAt: 1 }),
];

const patch = (change: (w: Workflow) => void): Workflow => {
  const copy = structuredClone(ir);
  change(copy);
  return copy;
};

describe('applyManualPatch', () => {
  it('returns the next IR version (source manual) with a diff', () => {
    const result = applyManualPatch({
      run,
      current,
      steps,
      catalog: builtinCatalog,
      now: 99,
      patch: patch((w) => {
        (w.nodes[1] as Workflow['nodes'][number]).params = { command: 'test "${send.stdout}" = sent' };
      }),
    });
    expect(result).toMatchObject({ ok: true, item: { runId: 'run-manual', version: 3, source: 'manual', nodesChanged: ['check'], createdAt: 99 } });
    expect(result.ok && result.item.diff).toEqual(['nodes[1].params.command: "test ${send.stdout} = ok" -> "test \\"${send.stdout}\\" = sent"']);
  });

  it('refuses a patch that changes a completed node with side effects', () => {
    const result = applyManualPatch({
      run,
      current,
      steps,
      catalog: builtinCatalog,
      now: 99,
      patch: patch((w) => {
        (w.nodes[0] as Workflow['nodes'][number]).params.command = 'echo ok';
      }),
    });
    expect(result).toEqual({
      ok: false,
      problems: ["node 'send' already ran and has side effects, so it is frozen, but its params change: it would run a second time"],
    });
  });

  it('refuses a patch that is not a valid workflow', () => {
    const result = applyManualPatch({ run, current, steps, catalog: builtinCatalog, now: 99, patch: { nodes: [{ id: 'x', type: 'nope' }] } });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems.join('\n')).toMatch(/unknown type 'nope'/);
  });
});
