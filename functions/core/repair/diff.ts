import { sameJson } from '../cache-key.ts';
import type { Workflow, WorkflowNode } from '../ir.ts';
import { isRecord } from '../json-text.ts';

const MAX_VALUE_CHARS = 120;
const MAX_LINES = 50;

const show = (value: unknown): string => {
  const text = value === undefined ? '(none)' : JSON.stringify(value);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
};

/** Leaf-level changes between two values, as `path: before -> after`. */
function diffValue(before: unknown, after: unknown, path: string, lines: string[]): void {
  if (sameJson(before, after)) return;
  if (isRecord(before) && isRecord(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      diffValue(before[key], after[key], `${path}.${key}`, lines);
    }
    return;
  }
  lines.push(`${path}: ${show(before)} -> ${show(after)}`);
}

const edgeText = (e: Workflow['edges'][number]): string => `${e.from} -> ${e.to} (${e.action})`;

/** Ids of nodes that were added or whose content differs (node order ignored). */
export function changedNodeIds(before: Workflow, after: Workflow): string[] {
  const old = new Map(before.nodes.map((n) => [n.id, n]));
  return after.nodes.filter((n) => !sameJson(old.get(n.id), n)).map((n) => n.id);
}

/** What changed from one IR to the next, one line per change, nodes matched by id. */
export function diffWorkflows(before: Workflow, after: Workflow): string[] {
  const lines: string[] = [];
  const oldNodes = new Map<string, WorkflowNode>(before.nodes.map((n) => [n.id, n]));
  const newIds = new Set(after.nodes.map((n) => n.id));
  after.nodes.forEach((node, i) => {
    const old = oldNodes.get(node.id);
    if (old === undefined) lines.push(`nodes[${i}] (${node.id}): added ${show(node)}`);
    else diffValue(old, node, `nodes[${i}]`, lines);
  });
  for (const node of before.nodes) if (!newIds.has(node.id)) lines.push(`nodes (${node.id}): removed`);
  const oldEdges = new Set(before.edges.map(edgeText));
  const newEdges = new Set(after.edges.map(edgeText));
  for (const e of newEdges) if (!oldEdges.has(e)) lines.push(`edges: added ${e}`);
  for (const e of oldEdges) if (!newEdges.has(e)) lines.push(`edges: removed ${e}`);
  const { nodes: _n, edges: _e, ...restBefore } = before;
  const { nodes: _n2, edges: _e2, ...restAfter } = after;
  diffValue(restBefore, restAfter, '', lines);
  const cleaned = lines.map((l) => (l.startsWith('.') ? l.slice(1) : l));
  return cleaned.length > MAX_LINES ? [...cleaned.slice(0, MAX_LINES), `… and ${cleaned.length - MAX_LINES} more changes`] : cleaned;
}
