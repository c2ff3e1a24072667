import type { NodeCatalog } from '../node-type.ts';
import type { IrVersionItem, NodeRecord, RunItem } from '../run-model.ts';
import { checkProposal } from './check-proposal.ts';
import { completedNodes } from './completed-nodes.ts';
import { changedNodeIds, diffWorkflows } from './diff.ts';
import { nextIrVersion } from './next-version.ts';

export interface ManualPatchInput {
  run: RunItem;
  /** The run's current IR version (run.irVersion). */
  current: IrVersionItem;
  steps: readonly NodeRecord[];
  /** The patched workflow as read from the person's file. */
  patch: unknown;
  catalog: NodeCatalog;
  now: number;
  reason?: string;
}

export type ManualPatchResult = { ok: true; item: IrVersionItem } | { ok: false; problems: string[] };

/**
 * A person's patch for `flowmend resume --workflow`: the same schema, validation and frozen-node checks
 * as a machine's repair, but not the keep-unchanged rule (a person may restructure freely).
 * Returns the IR version item to write (source 'manual'), or the problems.
 */
export function applyManualPatch(input: ManualPatchInput): ManualPatchResult {
  const before = input.current.ir;
  const completed = completedNodes(input.run, input.steps);
  const check = checkProposal({ before, proposal: input.patch, completed, catalog: input.catalog });
  if (!check.ok) return check;
  return {
    ok: true,
    item: {
      runId: input.run.runId,
      version: nextIrVersion(input.run),
      ir: check.ir,
      source: 'manual',
      reason: input.reason ?? 'Workflow patched by hand',
      diff: diffWorkflows(before, check.ir),
      nodesChanged: changedNodeIds(before, check.ir),
      createdAt: input.now,
    },
  };
}
