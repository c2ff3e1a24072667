import { sameJson } from '../cache-key.ts';
import type { Workflow } from '../ir.ts';
import type { NodeCatalog } from '../node-type.ts';

/** Top-level keys a repair may change; every other one (inputs, description, name, ...) must stay as it was. */
const REPAIRABLE_TOP_LEVEL = new Set(['nodes', 'edges', 'outputs', 'start_node']);

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const names = (reason: string, word: string): boolean => new RegExp(`(^|[^\\w-])${escapeRegExp(word)}($|[^\\w-])`).test(reason);
const saysRemoved = (reason: string): boolean => /\b(remov|delet|drop)/i.test(reason);

/**
 * The rule for an LLM's proposal: it keeps everything it had no reason to change.
 * - Top-level keys other than nodes, edges, outputs and start_node are identical; start_node changes
 *   only when it named no node.
 * - Every node stays (same id) unless the reason says it removes it by id; `purpose` stays, `side_effects` is identical.
 * - Every param of a kept node stays unless the node type changed, the param is unknown to its type,
 *   or the reason names the param.
 * - Every edge stays unless an end no longer exists (or never did), or the same (from, action) now leads elsewhere.
 * - Every declared output stays (its source may change).
 * Additions are free; static validation judges them.
 */
export function keepUnchangedProblems(before: Workflow, after: Workflow, reason: string, catalog: NodeCatalog): string[] {
  const problems: string[] = [];
  const beforeTop = before as Record<string, unknown>;
  const afterTop = after as Record<string, unknown>;
  for (const key of new Set([...Object.keys(beforeTop), ...Object.keys(afterTop)])) {
    if (REPAIRABLE_TOP_LEVEL.has(key) || sameJson(beforeTop[key], afterTop[key])) continue;
    problems.push(`top-level "${key}" changed; a repair may only change nodes, edges and outputs`);
  }
  const oldIds = new Set(before.nodes.map((n) => n.id));
  if (after.start_node !== before.start_node && before.start_node !== undefined && oldIds.has(before.start_node)) {
    problems.push(`start_node changed from '${before.start_node}'; it named a node, so it must stay`);
  }
  const newNodes = new Map(after.nodes.map((n) => [n.id, n]));
  for (const old of before.nodes) {
    const node = newNodes.get(old.id);
    if (node === undefined) {
      if (!(saysRemoved(reason) && names(reason, old.id)))
        problems.push(`node '${old.id}' was dropped; keep it, or say in the reason that you remove '${old.id}'`);
      continue;
    }
    if (old.purpose !== undefined && node.purpose === undefined) problems.push(`node '${old.id}' lost its "purpose"`);
    if (old.side_effects !== node.side_effects) problems.push(`node '${old.id}' "side_effects" changed; it must stay as declared`);
    if (node.type !== old.type) continue;
    const known = catalog.get(old.type)?.paramsSchema.shape;
    for (const param of Object.keys(old.params)) {
      if (Object.hasOwn(node.params, param) || (known !== undefined && !Object.hasOwn(known, param)) || names(reason, param)) continue;
      problems.push(`node '${old.id}' lost its param "${param}"; keep every param you do not mean to change`);
    }
  }
  const newEdges = new Set(after.edges.map((e) => `${e.from}\u0000${e.to}\u0000${e.action}`));
  const newRoutes = new Set(after.edges.map((e) => `${e.from}\u0000${e.action}`));
  for (const edge of before.edges) {
    if (newEdges.has(`${edge.from}\u0000${edge.to}\u0000${edge.action}`) || newRoutes.has(`${edge.from}\u0000${edge.action}`)) continue;
    const endGone = [edge.from, edge.to].some((id) => !oldIds.has(id) || !newNodes.has(id));
    if (!endGone) problems.push(`edge ${edge.from} -> ${edge.to} (${edge.action}) was dropped`);
  }
  for (const name of Object.keys(before.outputs)) {
    if (!Object.hasOwn(after.outputs, name)) problems.push(`output '${name}' was dropped`);
  }
  return problems;
}
