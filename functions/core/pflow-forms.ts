import { isRecord } from './json-text.ts';
import { MCP_TYPE, type McpServers, splitMcpAlias } from './mcp-servers.ts';
import { lowerPromptCache } from './pflow-prompt-cache.ts';
import { fillSharedStoreParams } from './pflow-shared-store.ts';

export interface PflowFormOptions {
  /** Servers from a config file (pflow's mcp-servers.json): those the workflow calls are copied into it. */
  mcpServers?: McpServers;
}

/** pflow's saved-workflow file: `{ "name", "description", "ir": {...}, "created_at", ... }`. */
const unwrapSavedWorkflow = (raw: Record<string, unknown>): Record<string, unknown> => {
  if (!isRecord(raw.ir) || raw.nodes !== undefined) return raw;
  const ir = { ...raw.ir };
  if (ir.name === undefined && typeof raw.name === 'string') ir.name = raw.name;
  if (ir.description === undefined && typeof raw.description === 'string') ir.description = raw.description;
  return ir;
};

/** `{ type: "mcp-slack-send_message", params: {...} }` as `{ type: "mcp", params: { server, tool, arguments } }`. */
const canonicalMcpNode = (node: unknown, knownServers: readonly string[]): unknown => {
  if (!isRecord(node) || typeof node.type !== 'string') return node;
  const split = splitMcpAlias(node.type, knownServers);
  if (split === undefined) return node;
  const args = isRecord(node.params) ? node.params : {};
  return { ...node, type: MCP_TYPE, params: { server: split.server, tool: split.tool, arguments: args } };
};

/** Keys pflow's markdown parser and file resolver add for their own diagnostics: accepted and dropped. */
const SOURCE_KEYS = ['_source_line', '_source_lines', '_source_files', '_routes_to_end'];
const withoutSourceKeys = (value: unknown): unknown => {
  if (!isRecord(value) || !SOURCE_KEYS.some((k) => Object.hasOwn(value, k))) return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !SOURCE_KEYS.includes(k)));
};
const mapValues = (value: unknown, f: (v: unknown) => unknown): unknown =>
  isRecord(value) ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, f(v)])) : value;

/** A saved workflow's name (pflow's library) rather than a file: no path separator and no workflow extension. */
const isSavedName = (ref: string): boolean => !/[/\\]/.test(ref) && !/\.(json|md)$/i.test(ref);

/**
 * pflow's 2026 nested form, `workflow: ./child.pflow.md | saved-name` with `inputs: {...}`, as the form
 * flowmend resolves: `workflow_ref` (a file) or `workflow_name` (a registered workflow) and `param_mapping`.
 */
const canonicalWorkflowNode = (node: unknown): unknown => {
  if (!isRecord(node) || node.type !== 'workflow' || !isRecord(node.params)) return node;
  const { workflow, inputs, ...rest } = node.params;
  if (typeof workflow !== 'string') return node;
  // A templated reference (`${item.workflow}` on a batch) names files: the loader resolves it from the batch's items.
  const source = !workflow.includes('${') && isSavedName(workflow) ? { workflow_name: workflow } : { workflow_ref: workflow };
  return { ...node, params: { ...source, ...(inputs !== undefined ? { param_mapping: inputs } : {}), ...rest } };
};

/**
 * Rewrites the forms pflow accepts into flowmend's IR before parsing: the saved-workflow wrapper,
 * `mcp-<server>-<tool>` node types, servers declared in a config file rather than the workflow, the
 * `workflow:` + `inputs:` nested form, the parser's `_source*` metadata (dropped), params pflow read
 * from its shared store (pflow-shared-store.ts), and prompt-cache chunks as llm params (pflow-prompt-cache.ts).
 * Anything else is left for the schema to judge.
 */
export const normalisePflowForms = (raw: unknown, options: PflowFormOptions = {}): unknown => {
  if (!isRecord(raw)) return raw;
  const workflow = unwrapSavedWorkflow(raw);
  if (!Array.isArray(workflow.nodes)) return workflow;
  const declared = isRecord(workflow.mcp_servers) ? workflow.mcp_servers : {};
  const configured = options.mcpServers ?? {};
  const cache = isRecord(workflow.cache) ? { ...(withoutSourceKeys(workflow.cache) as Record<string, unknown>) } : workflow.cache;
  if (isRecord(cache) && Array.isArray(cache.items)) cache.items = cache.items.map(withoutSourceKeys);
  const nodes = lowerPromptCache(
    fillSharedStoreParams(
      workflow.nodes.map((n) => canonicalWorkflowNode(canonicalMcpNode(withoutSourceKeys(n), [...Object.keys(declared), ...Object.keys(configured)]))),
      workflow.edges,
    ),
    cache,
  );
  const used = new Set(
    nodes.flatMap((n) => (isRecord(n) && n.type === MCP_TYPE && isRecord(n.params) && typeof n.params.server === 'string' ? [n.params.server] : [])),
  );
  const fromConfig = Object.fromEntries([...used].filter((s) => !Object.hasOwn(declared, s) && Object.hasOwn(configured, s)).map((s) => [s, configured[s]]));
  const servers = { ...fromConfig, ...declared };
  return {
    ...workflow,
    nodes,
    ...(workflow.outputs !== undefined ? { outputs: mapValues(workflow.outputs, withoutSourceKeys) } : {}),
    ...(cache !== undefined ? { cache } : {}),
    ...(Object.keys(servers).length > 0 ? { mcp_servers: servers } : {}),
  };
};
