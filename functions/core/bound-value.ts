import { isRecord, jsonContainerIn } from './json-text.ts';

/**
 * How much of a node's outputs a viewer gets: enough to see what happened, never a whole download.
 * A page shows many nodes at once, so each value is cut well below what the store may hold.
 */
export const VIEW_LIMITS = { stringChars: 2_000, arrayItems: 25, objectKeys: 50, depth: 5 } as const;

/** Keys whose values are credentials wherever they appear (headers, bodies, env maps). */
const SECRET_KEY = /pass(word|wd)?|secret|token|api[-_]?key|authori[sz]ation|cookie|credential|private[-_]?key|signature/i;

export const REDACTED = '[redacted]';

const boundString = (value: string): string => {
  const extra = value.length - VIEW_LIMITS.stringChars;
  return extra > 0 ? `${value.slice(0, VIEW_LIMITS.stringChars)}… (${extra} more characters)` : value;
};

/** A copy of `value` cut to VIEW_LIMITS, with the values of secret-looking keys replaced by REDACTED. */
export const boundValue = (value: unknown, depth = 0): unknown => {
  if (typeof value === 'string') {
    // JSON text (a shell node's stdout, a response body) is bounded and redacted as the data it holds.
    const held = depth < VIEW_LIMITS.depth && value.length <= 1_000_000 ? jsonContainerIn(value) : undefined;
    if (held !== undefined) return boundString(JSON.stringify(boundValue(held, depth + 1)));
    return boundString(value);
  }
  if (value === null || typeof value !== 'object') return value;
  if (depth >= VIEW_LIMITS.depth) return Array.isArray(value) ? `[… ${value.length} items]` : '{…}';
  if (Array.isArray(value)) {
    const items = value.slice(0, VIEW_LIMITS.arrayItems).map((v) => boundValue(v, depth + 1));
    return value.length > VIEW_LIMITS.arrayItems ? [...items, `… ${value.length - VIEW_LIMITS.arrayItems} more items`] : items;
  }
  if (!isRecord(value)) return String(value);
  const keys = Object.keys(value);
  const out: Record<string, unknown> = {};
  for (const key of keys.slice(0, VIEW_LIMITS.objectKeys)) out[key] = SECRET_KEY.test(key) ? REDACTED : boundValue(value[key], depth + 1);
  if (keys.length > VIEW_LIMITS.objectKeys) out['…'] = `${keys.length - VIEW_LIMITS.objectKeys} more keys`;
  return out;
};
