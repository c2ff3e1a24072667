import { isRecord } from './json-text.ts';

/** Anthropic keeps a cached prefix 5 minutes or 1 hour; pflow's `ttl` (1m-60m or 1h) maps to the shortest that covers it. */
const anthropicTtl = (ttl: unknown): '5m' | '1h' => {
  const minutes = typeof ttl === 'string' ? /^(\d+)m$/.exec(ttl)?.[1] : undefined;
  return ttl === '1h' || (minutes !== undefined && Number(minutes) > 5) ? '1h' : '5m';
};

/**
 * pflow's prompt caching as params of the llm node: the `## Cache` chunks a node names in `prompt_cache`
 * become `cached_context` (each chunk's prose, then its `${var}`: templates the engine resolves, checks
 * and keys like any param) and `cache_ttl`, which the runner sends as the cached system prefix. A node
 * naming a chunk that is not declared, or naming them out of order, is left as it is: validation says why.
 */
export const lowerPromptCache = (nodes: readonly unknown[], cache: unknown): unknown[] => {
  const items = isRecord(cache) && Array.isArray(cache.items) ? cache.items.filter(isRecord) : [];
  const order = items.map((item) => item.name);
  return nodes.map((node) => {
    if (!isRecord(node) || node.type !== 'llm' || !Array.isArray(node.prompt_cache)) return node;
    const params = isRecord(node.params) ? node.params : {};
    if (params.cached_context !== undefined) return node;
    const positions = node.prompt_cache.map((name) => order.indexOf(name));
    if (positions.some((p, i) => p < 0 || (i > 0 && p <= (positions[i - 1] as number)))) return node;
    const chunks = positions.map((p) => {
      const item = items[p] as Record<string, unknown>;
      return `${typeof item.prose_before === 'string' ? item.prose_before : ''}\${${String(item.var)}}`;
    });
    return { ...node, params: { ...params, cached_context: chunks, cache_ttl: anthropicTtl(isRecord(cache) ? cache.ttl : undefined) } };
  });
};
