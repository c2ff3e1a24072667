import { sameJson } from '../cache-key.ts';
import type { Workflow } from '../ir.ts';

type Keyed<T> = ReadonlyMap<string, T>;

/**
 * Three-way merge of keyed parts: what the person changed from `base` (changed, added or removed) is
 * theirs; everything else is as `current` has it (a repair's changes since `base` survive). Order: the
 * patch's, then what only `current` has.
 */
const mergeKeyed = <T>(base: Keyed<T>, current: Keyed<T>, patch: Keyed<T>): [string, T][] => {
  const merged = new Map<string, T>();
  const keys = [...new Set([...patch.keys(), ...current.keys(), ...base.keys()])];
  for (const key of keys) {
    const touched = !sameJson(base.get(key), patch.get(key));
    const value = touched ? patch.get(key) : current.get(key);
    if (value !== undefined) merged.set(key, value);
  }
  return [...merged];
};

const byId = <T extends { id: string }>(items: readonly T[]): Map<string, T> => new Map(items.map((item) => [item.id, item]));
const byEdge = (edges: Workflow['edges']): Map<string, Workflow['edges'][number]> => new Map(edges.map((e) => [`${e.from}\u0000${e.to}\u0000${e.action}`, e]));
const entries = <T>(record: Readonly<Record<string, T>>): Map<string, T> => new Map(Object.entries(record));

/** How many parts (nodes, edges, inputs, outputs, other top-level keys) differ between two workflows: the patch's distance from a version. */
export const workflowDistance = (a: Workflow, b: Workflow): number => {
  const count = <T>(x: Keyed<T>, y: Keyed<T>): number => [...new Set([...x.keys(), ...y.keys()])].filter((k) => !sameJson(x.get(k), y.get(k))).length;
  const { nodes: an, edges: ae, inputs: ai, outputs: ao, ...aTop } = a;
  const { nodes: bn, edges: be, inputs: bi, outputs: bo, ...bTop } = b;
  return (
    count(byId(an), byId(bn)) +
    count(byEdge(ae), byEdge(be)) +
    count(entries(ai), entries(bi)) +
    count(entries(ao), entries(bo)) +
    count(entries(aTop), entries(bTop))
  );
};

/**
 * A person's patch made from an earlier version of the run (`base`, e.g. the file the run started from),
 * carried onto the run's `current` version: nodes, edges, inputs, outputs and the other top-level keys
 * the person changed from `base` are theirs, the rest as `current` has them. A node both changed is the
 * person's (their intent wins; the frozen-node check then judges it like any patch).
 */
export const carryPatch = (base: Workflow, current: Workflow, patch: Workflow): Workflow => {
  const { nodes: bn, edges: be, inputs: bi, outputs: bo, ...bTop } = base;
  const { nodes: cn, edges: ce, inputs: ci, outputs: co, ...cTop } = current;
  const { nodes: pn, edges: pe, inputs: pi, outputs: po, ...pTop } = patch;
  return {
    ...Object.fromEntries(mergeKeyed(entries(bTop), entries(cTop), entries(pTop))),
    nodes: mergeKeyed(byId(bn), byId(cn), byId(pn)).map(([, node]) => node),
    edges: mergeKeyed(byEdge(be), byEdge(ce), byEdge(pe)).map(([, edge]) => edge),
    inputs: Object.fromEntries(mergeKeyed(entries(bi), entries(ci), entries(pi))),
    outputs: Object.fromEntries(mergeKeyed(entries(bo), entries(co), entries(po))),
  } as Workflow;
};
