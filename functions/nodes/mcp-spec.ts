import type { NodeTypeSpec } from '../core/index.ts';
import { MCP_TYPE, McpServerSchema } from '../core/index.ts';
import * as z from '../core/zod.ts';

/**
 * What the engine knows of the mcp node without the MCP SDK: `flowmend validate` and the engine's
 * catalog check and time mcp nodes from this, and only the runner (mcp.ts) loads the SDK.
 */
const DEFAULT_TIMEOUT_S = 60;

export const McpParamsSchema = z.strictObject({
  server: z.string({ error: 'server is required: the name of an MCP server under "mcp_servers" or in the --mcp-config file' }).check(z.minLength(1)),
  tool: z.string({ error: 'tool is required: the name of one tool of the server' }).check(z.minLength(1)),
  arguments: z._default(z.record(z.string(), z.unknown(), { error: "arguments must be an object of the tool's inputs" }), {}),
  timeout_s: z.optional(z.number({ error: 'timeout_s must be a number of seconds' }).check(z.positive())),
  /** Reserved: the server's configuration, put here by the engine from the workflow's `mcp_servers`. */
  __server: z.optional(McpServerSchema),
});
export type McpParams = z.infer<typeof McpParamsSchema>;

export const MCP_OUTPUT_KEYS = ['result', 'is_error', 'content'] as const;

export const timeoutOf = (params: Record<string, unknown>): number =>
  typeof params.timeout_s === 'number' && params.timeout_s > 0 ? params.timeout_s : DEFAULT_TIMEOUT_S;

export const mcpSpec: NodeTypeSpec = {
  type: MCP_TYPE,
  paramsSchema: McpParamsSchema,
  outputKeys: MCP_OUTPUT_KEYS,
  // A tool may change the world; a node marks a read-only tool with `"side_effects": false`.
  sideEffects: () => true,
  timeoutS: timeoutOf,
  capabilities: { apiResponse: true },
};
