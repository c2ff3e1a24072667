import type { McpTools, NodeRunner, RunContext, RunnerResult } from '../core/index.ts';
import { ConfigurationError, closestMatch, sampleOf } from '../core/index.ts';
import { type McpParams, McpParamsSchema, mcpSpec } from './mcp-spec.ts';
import { monotonicMs } from './monotonic-clock.ts';

export { MCP_OUTPUT_KEYS, type McpParams, McpParamsSchema } from './mcp-spec.ts';

/** The runner's port, injected by the host: the client that calls the tool (on AWS it reaches Streamable HTTP servers only). */
export interface McpRunnerDeps {
  tools: McpTools;
}

type ContentBlock = { type: string; text?: string };

const textOf = (content: readonly ContentBlock[]): string =>
  content.flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : [])).join('\n');

const schemaDetail = (inputSchema: unknown): { input_schema?: unknown } => (inputSchema === undefined ? {} : { input_schema: inputSchema });

export const makeMcpRunner = ({ tools }: McpRunnerDeps): NodeRunner<typeof McpParamsSchema> => {
  const run = async (params: McpParams, context: RunContext): Promise<RunnerResult> => {
    const { server: serverName, tool, arguments: args, __server: server } = params;
    const target = `MCP ${serverName}/${tool}`;
    if (server === undefined)
      throw new ConfigurationError(`MCP server '${serverName}' is not configured: declare it under "mcp_servers" or in the --mcp-config file`);
    const details = { server: serverName, tool };
    const started = monotonicMs();
    const outcome = await tools.call({
      serverName,
      server,
      tool,
      arguments: args,
      timeoutMs: mcpSpec.timeoutS(params) * 1000,
      ...(context.signal ? { signal: context.signal } : {}),
    });
    const durationMs = monotonicMs() - started;
    if (outcome.kind === 'refused') {
      const code = outcome.reason === 'invalid_arguments' ? 'MCP_INVALID_ARGUMENTS' : 'MCP_UNKNOWN_TOOL';
      const available = outcome.availableTools;
      const guess = available === undefined ? undefined : closestMatch(tool, available);
      const hint =
        available === undefined
          ? ''
          : ` (server '${serverName}' has ${available.length === 0 ? 'no tools' : `the tools ${available.join(', ')}`}${guess === undefined ? '' : `; did you mean '${guess}'?`})`;
      return {
        kind: 'failed',
        error: {
          code,
          message: `${target}: ${outcome.message}${hint}`,
          details: { ...details, ...schemaDetail(outcome.inputSchema), ...(available === undefined ? {} : { available_tools: available }) },
        },
        durationMs,
      };
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
