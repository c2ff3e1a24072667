import { editDistance } from '../closest-match.ts';
import { isRecord, openJsonText } from '../json-text.ts';
import { findTemplates, formatPath, type TemplateContext } from '../templates.ts';

type Segment = string | number;

/** How far a fix strays from what was written: a case change is safest, a change of depth least safe. */
const COST = { case: 1, typo: 2, depth: 3 } as const;
/** At most this many edits in one template: more would be a guess, not a typo. */
const MAX_EDITS = 2;

const containerOf = openJsonText;

/** Largest edit distance that still reads as a typo (closest-match's rule). */
const typoLimit = (a: string, b: string): number => {
  const length = Math.max(a.length, b.length);
  return length <= 3 ? Math.min(1, a.length - 1) : Math.max(1, Math.floor(length * 0.4));
};

/** Keys equal to `word` but for case, else the keys at the smallest plausible typo distance (several = a tie). */
export function nearKeys(word: string, keys: readonly string[]): { keys: string[]; cost: number } {
  const lower = word.toLowerCase();
  const sameCase = keys.filter((k) => k !== word && k.toLowerCase() === lower);
  if (sameCase.length > 0) return { keys: sameCase, cost: COST.case };
  let best = Number.POSITIVE_INFINITY;
  let found: string[] = [];
  for (const key of keys) {
    if (key === word) continue;
    const limit = typoLimit(lower, key);
    const distance = editDistance(lower, key.toLowerCase(), limit);
    if (distance > limit || distance > best) continue;
    if (distance < best) found = [];
    best = distance;
    found.push(key);
  }
  return { keys: found, cost: COST.typo };
}

/** The one key close to `word`, when exactly one is. */
export function uniqueNearKey(word: string, keys: readonly string[]): string | undefined {
  const near = nearKeys(word, keys);
  return near.keys.length === 1 ? near.keys[0] : undefined;
}

interface Candidate {
  path: Segment[];
  cost: number;
}

/** Walks `path` through `value`; at a broken segment tries a case/typo fix, one level deeper or one shallower. */
function walk(value: unknown, path: readonly Segment[], i: number, edits: number, cost: number, acc: Segment[], out: Candidate[]): void {
  if (i === path.length) {
    if (value !== undefined) out.push({ path: acc, cost });
    return;
  }
  const seg = path[i] as Segment;
  const here = containerOf(value);
  if (typeof seg === 'number') {
    if (Array.isArray(here) && seg < here.length) walk(here[seg], path, i + 1, edits, cost, [...acc, seg], out);
    return;
  }
  if (isRecord(here) && Object.hasOwn(here, seg) && here[seg] !== undefined) {
    walk(here[seg], path, i + 1, edits, cost, [...acc, seg], out);
    return;
  }
  if (edits >= MAX_EDITS) return;
  if (isRecord(here)) {
    const keys = Object.keys(here);
    const near = nearKeys(seg, keys);
    for (const key of near.keys) walk(here[key], path, i + 1, edits + 1, cost + near.cost, [...acc, key], out);
    for (const key of keys) {
      const inner = containerOf(here[key]);
      if (isRecord(inner) && Object.hasOwn(inner, seg)) walk(inner[seg], path, i + 1, edits + 1, cost + COST.depth, [...acc, key, seg], out);
    }
  }
  if (Array.isArray(here) && here.length > 0) walk(here[0], path, i, edits + 1, cost + COST.depth, [...acc, 0], out);
  // One level shallower: drop this segment, never the last one (the key asked for must stay the key read).
  if (i + 1 < path.length) walk(value, path, i + 1, edits + 1, cost + COST.depth, acc, out);
}

/** The single cheapest candidate, or undefined when there is none or a tie (an ambiguous fix is no fix). */
function pickUnambiguous(candidates: readonly { text: string; cost: number }[]): string | undefined {
  const best = Math.min(...candidates.map((c) => c.cost));
  const texts = new Set(candidates.filter((c) => c.cost === best).map((c) => c.text));
  return texts.size === 1 ? [...texts][0] : undefined;
}

const parseExpr = (expr: string): { root: string; path: Segment[] } | undefined => findTemplates(`\${${expr}}`)[0];

/**
 * The expression a broken template most likely meant, checked against real values (inputs and the
 * outputs of completed nodes): it must resolve there. Undefined when no fix or more than one fits.
 */
export function fixTemplateAtRuntime(expr: string, context: TemplateContext): string | undefined {
  const ref = parseExpr(expr);
  if (ref === undefined) return undefined;
  const names = [...Object.keys(context.inputs), ...Object.keys(context.nodes)];
  const rootValue = (name: string): unknown => (Object.hasOwn(context.nodes, name) ? context.nodes[name] : context.inputs[name]);
  const out: Candidate[] = [];
  const roots: { name: string; cost: number; edits: number }[] = names.includes(ref.root)
    ? [{ name: ref.root, cost: 0, edits: 0 }]
    : (() => {
        const near = nearKeys(ref.root, names);
        return near.keys.map((name) => ({ name, cost: near.cost, edits: 1 }));
      })();
  const found: { text: string; cost: number }[] = [];
  for (const root of roots) {
    out.length = 0;
    walk(rootValue(root.name), ref.path, 0, root.edits, root.cost, [], out);
    for (const c of out) found.push({ text: formatPath(root.name, c.path), cost: c.cost });
  }
  const fixed = found.length === 0 ? undefined : pickUnambiguous(found);
  return fixed === expr ? undefined : fixed;
}

/**
 * The expression a template meant, judged statically: the root against node ids and input names,
 * the first key against the node type's declared output keys. Undefined when nothing (or not one thing) fits.
 */
export function fixTemplateStatically(
  expr: string,
  nodes: ReadonlyMap<string, readonly string[] | undefined>,
  inputNames: readonly string[],
): string | undefined {
  const ref = parseExpr(expr);
  if (ref === undefined) return undefined;
  let root = ref.root;
  if (!nodes.has(root) && !inputNames.includes(root)) {
    const fixed = uniqueNearKey(root, [...nodes.keys(), ...inputNames]);
    if (fixed === undefined) return undefined;
    root = fixed;
  }
  const path = [...ref.path];
  const outputKeys = inputNames.includes(root) && !nodes.has(root) ? undefined : nodes.get(root);
  const first = path[0];
  if (outputKeys !== undefined && outputKeys.length > 0 && typeof first === 'string' && !outputKeys.includes(first)) {
    const fixed = uniqueNearKey(first, outputKeys);
    if (fixed === undefined) return undefined;
    path[0] = fixed;
  }
  const text = formatPath(root, path);
  return text === expr ? undefined : text;
}
