import * as z from 'zod';
import { sampleOf } from '../core/index.ts';
import { ConfigurationError } from '../core/index.ts';
import { MCP_TYPE, McpServerSchema } from '../core/index.ts';
import type { McpTools, NodeRunner, NodeTypeSpec, RunContext, RunnerResult } from '../core/index.ts';

const DEFAULT_TIMEOUT_S = 60;

export const McpParamsSchema = z.strictObject({
  server: z.string({ error: 'server is required: the name of an MCP server under "mcp_servers" or in the --mcp-config file' }).min(1),
  tool: z.string({ error: 'tool is required: the name of one tool of the server' }).min(1),
  arguments: z.record(z.string(), z.unknown(), { error: 'arguments must be an object of the tool\'s inputs' }).default({}),
  timeout_s: z.number({ error: 'timeout_s must be a number of seconds' }).positive().optional(),
  /** Reserved: the server's configuration, put here by the engine from the workflow's `mcp_servers`. */
  __server: McpServerSchema.optional(),
});
export type McpParams = z.infer<typeof McpParamsSchema>;

export const MCP_OUTPUT_KEYS = ['result', 'is_error', 'content'] as const;

/** The runner's port, injected by the host: the client that calls the tool (on AWS it reaches Streamable HTTP servers only). */
export interface McpRunnerDeps {
  tools: McpTools;
}

const timeoutOf = (params: Record<string, unknown>): number =>
  typeof params.timeout_s === 'number' && params.timeout_s > 0 ? params.timeout_s : DEFAULT_TIMEOUT_S;

type ContentBlock = { type: string; text?: string };

const textOf = (content: readonly ContentBlock[]): string =>
  content.flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : [])).join('\n');

const schemaDetail = (inputSchema: unknown): { input_schema?: unknown } => (inputSchema === undefined ? {} : { input_schema: inputSchema });

/** What the engine knows of the mcp node; the runner adds the call. */
export const mcpSpec: NodeTypeSpec = {
  type: MCP_TYPE,
  paramsSchema: McpParamsSchema,
  outputKeys: MCP_OUTPUT_KEYS,
  // A tool may change the world; a node marks a read-only tool with `"side_effects": false`.
  sideEffects: () => true,
  timeoutS: timeoutOf,
  capabilities: { apiResponse: true },
};

export const makeMcpRunner = ({ tools }: McpRunnerDeps): NodeRunner<typeof McpParamsSchema> => {
  const run = async (params: z.infer<typeof McpParamsSchema>, context: RunContext): Promise<RunnerResult> => {
    const { server: serverName, tool, arguments: args, __server: server } = params;
    const target = `MCP ${serverName}/${tool}`;
    if (server === undefined) throw new ConfigurationError(`MCP server '${serverName}' is not configured: declare it under "mcp_servers" or in the --mcp-config file`);
    const details = { server: serverName, tool };
    const started = performance.now();
    const outcome = await tools.call({ serverName, server, tool, arguments: args, timeoutMs: timeoutOf(params) * 1000, ...(context.signal ? { signal: context.signal } : {}) });
    const durationMs = performance.now() - started;
    if (outcome.kind === 'refused') {
      const code = outcome.reason === 'invalid_arguments' ? 'MCP_INVALID_ARGUMENTS' : 'MCP_UNKNOWN_TOOL';
      return { kind: 'failed', error: { code, message: `${target}: ${outcome.message}`, details: { ...details, ...schemaDetail(outcome.inputSchema) } }, durationMs };
    }
    const content = outcome.content as ContentBlock[];
    const text = textOf(content);
    const outputs = { result: outcome.structuredContent ?? text, is_error: outcome.isError, content };
    if (!outcome.isError) return { kind: 'ok', outputs, action: 'default', durationMs };
    return {
      kind: 'failed',
      error: {
        code: 'MCP_TOOL_ERROR',
        message: `${target} returned an error: ${sampleOf(text || outcome.structuredContent || 'no message', 300)}`,
        details: { ...details, text, ...(outcome.structuredContent ? { structured: outcome.structuredContent } : {}), ...schemaDetail(outcome.inputSchema) },
      },
      outputs,
      durationMs,
    };
  };

  return { ...mcpSpec, paramsSchema: McpParamsSchema, run };
};
