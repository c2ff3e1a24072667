import { openJsonText } from '../core/index.ts';

/** Paths like `$.a.b[0].c`, `$['key with spaces']`, `$[2]`, or just `$`. */
export const EXTRACT_PATH_PATTERN = /^\$((\.[A-Za-z_$][\w$-]*)|(\[\d+\])|(\['[^']*'\])|(\["[^"]*"\]))*$/;

const SEGMENT = /\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]/g;

export type PathSegment = string | number;

export const parseExtractPath = (path: string): PathSegment[] => {
  if (!EXTRACT_PATH_PATTERN.test(path)) throw new Error(`not an extract path: ${path}`);
  const segments: PathSegment[] = [];
  for (const m of path.slice(1).matchAll(SEGMENT)) {
    segments.push(m[2] !== undefined ? Number(m[2]) : ((m[1] ?? m[3] ?? m[4]) as string));
  }
  return segments;
};

export const formatExtractPath = (segments: readonly PathSegment[]): string =>
  `$${segments.map((s) => (typeof s === 'number' ? `[${s}]` : /^[A-Za-z_$][\w$-]*$/.test(s) ? `.${s}` : `['${s}']`)).join('')}`;

export type ExtractResult =
  | { found: true; value: unknown }
  | {
      found: false;
      /** The longest prefix of the path that exists. */
      reached: string;
      /** The segment that was missing there. */
      missing: PathSegment;
      /** What was there instead: the keys of an object, the index range of an array, or the type. */
      available: string[];
    };

const MAX_KEYS = 30;

const describeAvailable = (value: unknown): string[] => {
  if (Array.isArray(value)) return value.length === 0 ? ['(empty array)'] : [`[0]..[${value.length - 1}]`];
  if (value !== null && typeof value === 'object') {
    const keys = Object.keys(value);
    if (keys.length === 0) return ['(empty object)'];
    return keys.length <= MAX_KEYS ? keys : [...keys.slice(0, MAX_KEYS), `… ${keys.length - MAX_KEYS} more`];
  }
  return [`(${value === null ? 'null' : typeof value}, not an object)`];
};

/** A string holding JSON is parsed when the path goes through it (as templates do). */
const openString = openJsonText;

/** Follows `path` through `root`. A value of `null` counts as found; `undefined` does not. */
export const extractPath = (root: unknown, path: string): ExtractResult => {
  const segments = parseExtractPath(path);
  let current: unknown = root;
  for (const [i, segment] of segments.entries()) {
    const container = openString(current);
    let next: unknown;
    if (typeof segment === 'number') next = Array.isArray(container) ? container[segment] : undefined;
    else if (container !== null && typeof container === 'object' && !Array.isArray(container) && Object.hasOwn(container, segment)) {
      next = (container as Record<string, unknown>)[segment];
    }
    if (next === undefined) {
      return { found: false, reached: formatExtractPath(segments.slice(0, i)), missing: segment, available: describeAvailable(container) };
    }
    current = next;
  }
  return { found: true, value: current };
};
