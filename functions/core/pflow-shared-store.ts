import { isRecord } from './json-text.ts';

/**
 * pflow's shared-store params: a node that leaves out a param that pflow read from its shared store, and the
 * node types of pflow that put a value under that key. Only `write-file`'s `content` is read this way in
 * pflow's own examples (`examples/core/simple-pipeline.pflow.md`: read-file, then write-file with no content).
 */
const SHARED_STORE_PARAMS: Readonly<Record<string, { param: string; writers: readonly string[] }>> = {
  'write-file': { param: 'content', writers: ['read-file'] },
};

type RawNode = Record<string, unknown> & { id: string; type: string };

const edgeEnds = (edge: unknown): [string, string] | undefined => {
  if (!isRecord(edge)) return undefined;
  const from = edge.from ?? edge.source;
  const to = edge.to ?? edge.target;
  return typeof from === 'string' && typeof to === 'string' ? [from, to] : undefined;
};

/** Nodes upstream of `id`, nearest first (breadth-first over the edges backwards; a loop's back edge is walked once). */
const upstream = (id: string, edges: readonly [string, string][]): string[] => {
  const seen = new Set([id]);
  const order: string[] = [];
  let frontier = [id];
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const node of frontier) {
      for (const [from, to] of edges) {
        if (to !== node || seen.has(from)) continue;
        seen.add(from);
        order.push(from);
        next.push(from);
      }
    }
    frontier = next;
  }
  return order;
};

/**
 * pflow's shared store read as templates: a `write-file` with no `content` writes the `content` of the
 * nearest read-file upstream that ran, `${reader.content}` (several, nearest first, joined with `??`, so
 * the one on the path taken wins, as the last writer of pflow's store does). A node with no such writer
 * upstream is left as it is, and validation says the param is missing.
 */
export const fillSharedStoreParams = (nodes: readonly unknown[], edges: unknown): unknown[] => {
  const typed = nodes.filter((n): n is RawNode => isRecord(n) && typeof n.id === 'string' && typeof n.type === 'string');
  if (!typed.some((n) => Object.hasOwn(SHARED_STORE_PARAMS, n.type))) return [...nodes];
  const ends = (Array.isArray(edges) ? edges : []).map(edgeEnds).filter((e): e is [string, string] => e !== undefined);
  const typeOf = new Map(typed.map((n) => [n.id, n.type]));
  return nodes.map((node) => {
    if (!isRecord(node) || typeof node.id !== 'string' || typeof node.type !== 'string') return node;
    const shared = SHARED_STORE_PARAMS[node.type];
    const params = isRecord(node.params) ? node.params : {};
    if (shared === undefined || params[shared.param] !== undefined) return node;
    const writers = upstream(node.id, ends).filter((id) => shared.writers.includes(typeOf.get(id) ?? ''));
    if (writers.length === 0) return node;
    return { ...node, params: { ...params, [shared.param]: `\${${writers.map((w) => `${w}.${shared.param}`).join(' ?? ')}}` } };
  });
};
