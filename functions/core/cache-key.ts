import { hash } from 'node:crypto';

/** JSON with object keys sorted, so equal values always serialise the same way. */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) => {
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
      return sorted;
    }
    return v;
  });

/**
 * Plain JSON data: an array, or an object of Object's prototype (or none) with no toJSON and no own
 * `__proto__` key (canonicalJson's sorted copy sets that one as the copy's prototype: the key is not written).
 */
const plainContainer = (value: object): boolean => {
  if (Array.isArray(value)) return Object.getPrototypeOf(value) === Array.prototype;
  const proto = Object.getPrototypeOf(value);
  return (proto === Object.prototype || proto === null) && typeof (value as { toJSON?: unknown }).toJSON !== 'function' && !Object.hasOwn(value, '__proto__');
};

/** A value JSON writes as itself: a string, a finite number, a boolean or null (objects aside). */
const jsonScalar = (value: unknown): boolean =>
  value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

/** The most nesting compared without the strings (a deeper value, or a cycle, goes to canonicalJson, which decides or throws). A value is the same as itself, cycle or not. */
const MAX_DEPTH = 200;

/** Equal or not when both are plain JSON; undefined when either holds anything else (JSON writes undefined, NaN, a Date... its own way). */
const plainEqual = (a: unknown, b: unknown, depth: number): boolean | undefined => {
  if (a === b) return true;
  const aObject = typeof a === 'object' && a !== null;
  const bObject = typeof b === 'object' && b !== null;
  if (!aObject || !bObject) {
    // Two scalars that are not ===, or a scalar and an array or object: never the same JSON.
    const plain = (aObject ? plainContainer(a) : jsonScalar(a)) && (bObject ? plainContainer(b as object) : jsonScalar(b));
    return plain ? false : undefined;
  }
  if (depth > MAX_DEPTH || !plainContainer(a) || !plainContainer(b)) return undefined;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    if (a.length !== other.length) return false;
    for (let i = 0; i < a.length; i += 1) {
      const same = plainEqual(a[i], other[i], depth + 1);
      if (same !== true) return same;
    }
    return true;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return otherKeys(left, right);
  for (const key of keys) {
    if (!Object.hasOwn(right, key)) return otherKeys(left, right);
    const same = plainEqual(left[key], right[key], depth + 1);
    if (same !== true) return same;
  }
  return true;
};

/** A value JSON leaves out of an object. */
const unwritten = (value: unknown): boolean => value === undefined || typeof value === 'function' || typeof value === 'symbol';

/** Objects with other keys: other JSON, unless a value JSON leaves out (undefined, a function) makes up the difference. */
const otherKeys = (left: Record<string, unknown>, right: Record<string, unknown>): false | undefined =>
  Object.values(left).some(unwritten) || Object.values(right).some(unwritten) ? undefined : false;

/**
 * Whether two values have the same canonicalJson, decided without writing either when both are plain JSON
 * (objects, arrays, strings, finite numbers, booleans, null): a patch's check compares a workflow's nodes a
 * few times over, and writing both sides each time was most of its cost. Anything else is decided by the strings.
 */
export const sameJson = (a: unknown, b: unknown): boolean => plainEqual(a, b, 0) ?? canonicalJson(a) === canonicalJson(b);

/**
 * Cache key of a node visit: its type and its *resolved* params. Resolved params contain the upstream
 * outputs they use, so a change upstream changes the key downstream by itself (pflow's cache misses this).
 */
export const computeCacheKey = (nodeType: string, resolvedParams: Record<string, unknown>): string =>
  // One-shot crypto.hash: ~3 µs where a Hash object took ~8-16 µs here (a key a step, and one a node on a resume's walk).
  hash('sha256', canonicalJson({ type: nodeType, params: resolvedParams }), 'hex').slice(0, 32);
