import { closestMatch } from './closest-match.ts';
import { isRecord, jsonContainerIn } from './json-text.ts';

/** What templates resolve against: inputs by name, node outputs by node id (a node wins a name clash). */
export interface TemplateContext {
  readonly inputs: Readonly<Record<string, unknown>>;
  readonly nodes: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** Nodes whose latest visit failed: their outputs stay readable, but a `??` chain passes them by (pflow's absent). */
  readonly failed?: ReadonlySet<string>;
}

type Path = readonly (string | number)[];
/** On failure, `suggestion` is the same template with the broken segment replaced by the closest key. */
type Traversal = { ok: true; value: unknown } | { ok: false; reason: string; suggestion?: string };

const KEY_NAME = /^[a-zA-Z_][\w-]*$/;
const KEYS_SHOWN = 20;
const NOT_JSON = Symbol('not JSON');

/** `fetch.response.items[0].title` from its root and path. */
export const formatPath = (root: string, path: Path): string =>
  path.reduce<string>((text, seg) => (typeof seg === 'number' ? `${text}[${seg}]` : `${text}.${seg}`), root);

/** A string holding a JSON object or array, parsed (once per resolution through `cache`); else NOT_JSON. */
function parseJsonContainer(text: string, cache: Map<string, unknown>): unknown {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const parsed: unknown = jsonContainerIn(text) ?? NOT_JSON;
  cache.set(text, parsed);
  return parsed;
}

/** A short description of a value for error messages. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return `an array of ${value.length} item${value.length === 1 ? '' : 's'}`;
  if (isRecord(value)) return Object.keys(value).length === 0 ? 'an empty object' : 'an object';
  if (typeof value === 'string') return value.length > 40 ? 'a string' : `the string ${JSON.stringify(value)}`;
  return `${typeof value === 'number' ? 'a number' : `a ${typeof value}`} (${String(value)})`;
}

/** Keys of an object, the one closest to `wanted` first, at most KEYS_SHOWN. */
function listKeys(keys: readonly string[], wanted: string): string {
  const close = closestMatch(wanted, keys);
  const ordered = close === undefined ? keys : [close, ...keys.filter((k) => k !== close)];
  const shown = ordered.slice(0, KEYS_SHOWN).join(', ');
  return keys.length > KEYS_SHOWN ? `${shown}, … (${keys.length - KEYS_SHOWN} more)` : shown || '(none)';
}

const didYouMean = (close: string | undefined): string => (close === undefined ? '' : ` — did you mean '${close}'?`);

const suggest = (root: string, path: Path, at: number, close: string | undefined): { suggestion?: string } => {
  if (close === undefined) return {};
  const fixed =
    at < 0
      ? formatPath(close, path)
      : formatPath(
          root,
          path.map((seg, i) => (i === at ? close : seg)),
        );
  return { suggestion: `\${${fixed}}` };
};

/** Follows a template's path; on failure says where it broke and what was available there. */
export function traverseTemplate(ref: { root: string; path: Path }, context: TemplateContext, jsonCache: Map<string, unknown>): Traversal {
  const isNode = Object.hasOwn(context.nodes, ref.root);
  if (!isNode && !Object.hasOwn(context.inputs, ref.root)) {
    const inputs = Object.keys(context.inputs);
    const nodes = Object.keys(context.nodes);
    const close = closestMatch(ref.root, [...inputs, ...nodes]);
    return {
      ok: false,
      reason:
        `no input or node output named '${ref.root}'${didYouMean(close)}` +
        ` (inputs: ${inputs.join(', ') || 'none'}; nodes with outputs: ${nodes.join(', ') || 'none'})`,
      ...suggest(ref.root, ref.path, -1, close),
    };
  }
  let current: unknown = isNode ? context.nodes[ref.root] : context.inputs[ref.root];
  for (let i = 0; i < ref.path.length; i++) {
    const seg = ref.path[i] as string | number;
    const here = formatPath(ref.root, ref.path.slice(0, i));
    let parsedNote = '';
    if (typeof current === 'string') {
      const parsed = parseJsonContainer(current, jsonCache);
      if (parsed === NOT_JSON) {
        const wanted = typeof seg === 'number' ? `[${seg}]` : `'${seg}'`;
        return { ok: false, reason: `'${here}' is ${describeValue(current)}, not a JSON object or array, so it has no ${wanted}` };
      }
      current = parsed;
      parsedNote = ' (parsed from its JSON text)';
    }
    if (typeof seg === 'number') {
      if (!Array.isArray(current)) {
        return { ok: false, reason: `'${here}'${parsedNote} is ${describeValue(current)}, not an array, so [${seg}] does not apply` };
      }
      if (seg >= current.length) {
        return { ok: false, reason: `'${here}'${parsedNote} has ${current.length} item${current.length === 1 ? '' : 's'}; index [${seg}] is out of range` };
      }
      current = current[seg];
    } else {
      if (!isRecord(current)) {
        return { ok: false, reason: `'${here}'${parsedNote} is ${describeValue(current)}, so it has no key '${seg}'` };
      }
      if (!Object.hasOwn(current, seg) || current[seg] === undefined) {
        const keys = Object.keys(current);
        const what = i === 0 && isNode ? `node '${ref.root}' has no output '${seg}'` : `'${here}'${parsedNote} has no key '${seg}'`;
        const close = closestMatch(seg, keys);
        return {
          ok: false,
          reason: `${what}${didYouMean(close)} (${i === 0 && isNode ? 'outputs' : 'keys'}: ${listKeys(keys, seg)})`,
          ...suggest(ref.root, ref.path, i, close),
        };
      }
      current = current[seg];
    }
  }
  if (current === undefined) return { ok: false, reason: `'${ref.root}' has no value` };
  return { ok: true, value: current };
}

const COLLECT_CAP = 500;
const KEYS_PER_OBJECT = 50;
const JSON_PARSE_MAX_CHARS = 1_000_000;

interface Pending {
  text: string;
  value: unknown;
  depth: number;
  /** Containers at this path are listed too (node outputs and inputs themselves). */
  listAlways: boolean;
}

function childrenOf(value: unknown, cache: Map<string, unknown>): [string | number, unknown][] {
  let container = value;
  if (typeof value === 'string' && value.length <= JSON_PARSE_MAX_CHARS) container = parseJsonContainer(value, cache);
  if (Array.isArray(container)) return container.length > 0 ? [[0, container[0]]] : [];
  if (isRecord(container)) {
    return Object.entries(container)
      .filter(([k, v]) => KEY_NAME.test(k) && v !== undefined)
      .slice(0, KEYS_PER_OBJECT);
  }
  return [];
}

/**
 * Template paths that would resolve now, shallow ones first: every input, every node output key,
 * and deeper leaves (into objects, the first array item and JSON held in strings) down to `maxDepth`
 * segments below the root. With `near`, the path closest to it comes first. At most `limit` paths.
 */
export function availablePaths(context: TemplateContext, options: { maxDepth?: number; limit?: number; near?: string } = {}): string[] {
  const maxDepth = options.maxDepth ?? 4;
  const limit = options.limit ?? 30;
  const cache = new Map<string, unknown>();
  const found: string[] = [];
  const queue: Pending[] = [];
  for (const [name, value] of Object.entries(context.inputs)) {
    if (!Object.hasOwn(context.nodes, name) && value !== undefined) queue.push({ text: name, value, depth: 0, listAlways: true });
  }
  for (const [id, outputs] of Object.entries(context.nodes)) {
    for (const [key, value] of childrenOf(outputs, cache)) {
      queue.push({ text: formatPath(id, [key]), value, depth: 1, listAlways: true });
    }
  }
  for (let head = 0; head < queue.length && found.length < COLLECT_CAP; head++) {
    const item = queue[head] as Pending;
    const children = item.depth < maxDepth ? childrenOf(item.value, cache) : [];
    const isLeaf = children.length === 0 || typeof item.value === 'string';
    if (item.listAlways || isLeaf) found.push(item.text);
    for (const [key, value] of children) {
      queue.push({ text: formatPath(item.text, [key]), value, depth: item.depth + 1, listAlways: false });
    }
  }
  const close = options.near === undefined ? undefined : closestMatch(options.near, found);
  const ordered = close === undefined ? found : [close, ...found.filter((p) => p !== close)];
  return ordered.slice(0, limit);
}
