import { INDEX_NAME } from '../batch/batch-config.ts';
import { withIndex } from '../batch/batch-items.ts';
import type { WorkflowNode } from '../ir.ts';
import { resolveValue, TemplateResolutionError } from '../templates.ts';

/** Whether a workflow node names its child with a template (pflow's `workflow: ${item.workflow}` on a batch). */
export const isTemplatedRef = (ref: string): boolean => ref.includes('${');

/**
 * The one file a templated `workflow_ref` names across a batch's literal items, read when the workflow is
 * loaded (the child is frozen into the run as any child is). Items given by a template are only known when
 * the run reaches the node, and items naming different files would make one batch run several workflows:
 * both are refused with what to write instead.
 */
export const refOfItems = (node: WorkflowNode, ref: string): { ok: true; ref: string } | { ok: false; message: string } => {
  const items = node.batch?.items;
  if (!Array.isArray(items)) {
    return {
      ok: false,
      message: `workflow_ref '${ref}' is a template: flowmend reads a child workflow when it loads the parent, so it resolves such a reference only from a batch's literal items (batch.items as an array); name the file itself`,
    };
  }
  const as = node.batch?.as ?? 'item';
  const refs = new Set<string>();
  for (const [index, item] of items.entries()) {
    let value: unknown;
    try {
      value = resolveValue(withIndex(ref, index), { inputs: { [as]: item, [INDEX_NAME]: index }, nodes: {} });
    } catch (error) {
      if (!(error instanceof TemplateResolutionError)) throw error;
      return { ok: false, message: `workflow_ref '${ref}' does not resolve for batch item ${index + 1}: ${error.message}` };
    }
    if (typeof value !== 'string' || value === '')
      return { ok: false, message: `workflow_ref '${ref}' resolves to ${JSON.stringify(value)} for batch item ${index + 1}, not a path to a workflow file` };
    refs.add(value);
  }
  const [only, ...others] = [...refs];
  if (only === undefined || others.length > 0) {
    return {
      ok: false,
      message: `workflow_ref '${ref}' names ${refs.size} different workflows across the batch's items (${[...refs].slice(0, 5).join(', ')}); a batch runs one child workflow per node: use one batch node per workflow`,
    };
  }
  return { ok: true, ref: only };
};
