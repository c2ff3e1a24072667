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
 * Cache key of a node visit: its type and its *resolved* params. Resolved params contain the upstream
 * outputs they use, so a change upstream changes the key downstream by itself (pflow's cache misses this).
 */
export const computeCacheKey = (nodeType: string, resolvedParams: Record<string, unknown>): string =>
  // One-shot crypto.hash: ~3 µs where a Hash object took ~8-16 µs here (a key a step, and one a node on a resume's walk).
  hash('sha256', canonicalJson({ type: nodeType, params: resolvedParams }), 'hex').slice(0, 32);
