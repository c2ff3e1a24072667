import { sameJson } from '../cache-key.ts';
import type { Workflow, WorkflowNode } from '../ir.ts';
import { findTemplates } from '../templates.ts';
import type { CompletedNode } from './types.ts';

/** Whether a node's type and params (what its cache key is made of) are the same in both. */
const sameCacheInputs = (node: WorkflowNode, old: WorkflowNode | undefined): boolean =>
  old !== undefined && node.type === old.type && sameJson(node.params, old.params);

const rootsOf = (node: WorkflowNode): string[] => [...new Set(findTemplates(node.params).map((r) => r.root))];

/** A completed node that a change would make run again, and why. */
export interface RerunNode {
  nodeId: string;
  sideEffects: boolean;
  why: string;
}

/**
 * Completed nodes whose cache key a change from `before` to `after` may change: their own type or
 * params change, an input they read changes, or (transitively, through templates) a completed node
 * they read from is re-run. Removed nodes are not re-run.
 */
export function nodesToRerun(before: Workflow, after: Workflow, completed: readonly CompletedNode[]): RerunNode[] {
  const oldNodes = new Map(before.nodes.map((n) => [n.id, n]));
  const newNodes = new Map(after.nodes.map((n) => [n.id, n]));
  const changedInputs = new Set(
    [...new Set([...Object.keys(before.inputs), ...Object.keys(after.inputs)])].filter((name) => !sameJson(before.inputs[name], after.inputs[name])),
  );
  const done = new Map(completed.map((c) => [c.nodeId, c]));
  const rerun = new Map<string, RerunNode>();
  // The roots a node's templates read, found once a node (and only where an input changed or a node re-runs).
  const roots = new Map<string, string[]>();
  const rootsOfNode = (node: WorkflowNode): string[] => {
    const known = roots.get(node.id);
    if (known !== undefined) return known;
    const found = rootsOf(node);
    roots.set(node.id, found);
    return found;
  };
  for (const [id, info] of done) {
    const node = newNodes.get(id);
    if (node === undefined) continue;
    if (!sameCacheInputs(node, oldNodes.get(id))) {
      rerun.set(id, { nodeId: id, sideEffects: info.sideEffects, why: 'its params change' });
      continue;
    }
    if (changedInputs.size === 0) continue;
    const input = rootsOfNode(node).find((root) => changedInputs.has(root) && !newNodes.has(root));
    if (input !== undefined) rerun.set(id, { nodeId: id, sideEffects: info.sideEffects, why: `it reads input '${input}', which changes` });
  }
  for (let grew = rerun.size > 0; grew; ) {
    grew = false;
    for (const [id, info] of done) {
      const node = newNodes.get(id);
      if (node === undefined || rerun.has(id)) continue;
      const upstream = rootsOfNode(node).find((root) => rerun.has(root));
      if (upstream === undefined) continue;
      rerun.set(id, { nodeId: id, sideEffects: info.sideEffects, why: `it uses the outputs of '${upstream}', which would run again` });
      grew = true;
    }
  }
  return [...rerun.values()];
}

/** One problem per completed node with side effects that the change would run a second time. */
export function frozenNodeProblems(before: Workflow, after: Workflow, completed: readonly CompletedNode[]): string[] {
  return nodesToRerun(before, after, completed)
    .filter((n) => n.sideEffects)
    .map((n) => `node '${n.nodeId}' already ran and has side effects, so it is frozen, but ${n.why}: it would run a second time`);
}
