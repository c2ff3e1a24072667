/** A copy with `undefined` entries dropped, as the DynamoDB store stores values. */
export function copyStoredValue<T>(value: T): T {
  if (Array.isArray(value)) return value.filter((v) => v !== undefined).map((v) => copyStoredValue(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = copyStoredValue(v);
    return out as T;
  }
  return value;
}

/** Deep equality of stored values, key order ignored. */
export function sameStoredValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameStoredValue(v, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const left = Object.entries(a).filter(([, v]) => v !== undefined);
  const right = b as Record<string, unknown>;
  const rightSize = Object.values(right).filter((v) => v !== undefined).length;
  return left.length === rightSize && left.every(([key, v]) => sameStoredValue(v, right[key]));
}
