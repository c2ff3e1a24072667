import type { McpServer } from './mcp-servers.ts';

/** One call of one tool, and the server to reach it on. */
export interface McpToolCall {
  serverName: string;
  server: McpServer;
  tool: string;
  arguments: Record<string, unknown>;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * What a call came to: the tool's result (`isError` when the tool itself reports a failure), or a
 * call the server refused because the workflow named an unknown tool or gave bad arguments. When
 * something went wrong, `inputSchema` is the tool's JSON Schema for its arguments (for the repairer).
 */
export type McpToolOutcome =
  | { kind: 'result'; content: readonly unknown[]; structuredContent?: unknown; isError: boolean; inputSchema?: unknown }
  | { kind: 'refused'; reason: 'invalid_arguments' | 'unknown_tool'; message: string; inputSchema?: unknown; availableTools?: readonly string[] };

/**
 * Calls one tool of one MCP server (the mcp node's port). Rejects with `TransientError` when the
 * connection fails or the server answers with another protocol error, and with `ConfigurationError`
 * when the server cannot be reached as configured (a command that does not exist, an unset `${VAR}`,
 * a stdio server on a host that cannot start one).
 */
export interface McpTools {
  call(request: McpToolCall): Promise<McpToolOutcome>;
}
