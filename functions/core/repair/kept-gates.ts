import type { Workflow } from '../ir.ts';

/**
 * A machine's repair may not take a person out of the loop: every gated node keeps its gate and stays.
 * (The workflow's `repair` policy is top level, which keep-unchanged.ts already refuses to change.)
 * A person's own patch may change both.
 */
export const keptGateProblems = (before: Workflow, after: Workflow): string[] =>
  before.nodes
    .filter((n) => n.approval === 'required')
    .filter((gated) => after.nodes.find((n) => n.id === gated.id)?.approval !== 'required')
    .map((gated) => `node '${gated.id}' has "approval": "required"; a repair must keep the node and its gate (a person decides about gates, not the repairer)`);
