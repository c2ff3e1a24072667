import { isRecord } from './json-text.ts';
import { MCP_TYPE, type McpServers, splitMcpAlias } from './mcp-servers.ts';

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

/**
 * Rewrites the forms pflow accepts into flowmend's IR before parsing: the saved-workflow wrapper,
 * `mcp-<server>-<tool>` node types, and servers declared in a config file rather than the workflow.
 * Anything else is left for the schema to judge.
 */
export const normalisePflowForms = (raw: unknown, options: PflowFormOptions = {}): unknown => {
  if (!isRecord(raw)) return raw;
  const workflow = unwrapSavedWorkflow(raw);
  if (!Array.isArray(workflow.nodes)) return workflow;
  const declared = isRecord(workflow.mcp_servers) ? workflow.mcp_servers : {};
  const configured = options.mcpServers ?? {};
  const nodes = workflow.nodes.map((n) => canonicalMcpNode(n, [...Object.keys(declared), ...Object.keys(configured)]));
  const used = new Set(
    nodes.flatMap((n) => (isRecord(n) && n.type === MCP_TYPE && isRecord(n.params) && typeof n.params.server === 'string' ? [n.params.server] : [])),
  );
  const fromConfig = Object.fromEntries([...used].filter((s) => !Object.hasOwn(declared, s) && Object.hasOwn(configured, s)).map((s) => [s, configured[s]]));
  const servers = { ...fromConfig, ...declared };
  return { ...workflow, nodes, ...(Object.keys(servers).length > 0 ? { mcp_servers: servers } : {}) };
};
