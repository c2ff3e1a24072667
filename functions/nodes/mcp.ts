import type { McpClient } from '../adapters/mcp-client.ts';
import { sampleOf } from '../core/index.ts';
import { ConfigurationError, TransientError } from '../core/index.ts';
import type { NodeRunner, RunContext, RunnerResult } from '../core/index.ts';
import { type McpParams, McpParamsSchema, mcpSpec } from './mcp-spec.ts';

export { MCP_OUTPUT_KEYS, type McpParams, McpParamsSchema } from './mcp-spec.ts';

export interface McpRunnerDeps {
  env?: Readonly<Record<string, string | undefined>>;
  /** false on AWS (Streamable HTTP only). */
  allowStdio?: boolean;
}

type ContentBlock = { type: string; text?: string };

const textOf = (content: readonly ContentBlock[]): string =>
  content.flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : [])).join('\n');

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT']);

const errnoOf = (error: unknown): string | undefined => {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
};

const inputSchemaOf = async (client: McpClient, tool: string): Promise<unknown> => {
  try {
    return (await client.listTools()).tools.find((t) => t.name === tool)?.inputSchema;
  } catch {
    return undefined;
  }
};

/**
 * Maps what the SDK threw: bad arguments or an unknown tool are the workflow's to fix (data, with
 * the tool's input schema for the repairer); other protocol errors and lost connections are
 * transient (thrown for the state machine's Retry); a command that does not exist is configuration.
 */
type McpSdkTypes = typeof import('@modelcontextprotocol/sdk/types.js');

/** The MCP SDK loads with the first mcp node a process runs, not with every local run (CLI start-up). */
const loadMcpSdk = () => Promise.all([import('@modelcontextprotocol/sdk/types.js'), import('../adapters/mcp-client.ts')]);

const toFailure = ({ ErrorCode, McpError }: McpSdkTypes, error: unknown, target: string, details: Record<string, unknown>, durationMs: number): RunnerResult => {
  if (error instanceof ConfigurationError || error instanceof TransientError) throw error;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound) {
      const code = error.code === ErrorCode.InvalidParams ? 'MCP_INVALID_ARGUMENTS' : 'MCP_UNKNOWN_TOOL';
      return { kind: 'failed', error: { code, message: `${target}: ${error.message}`, details }, durationMs };
    }
    throw new TransientError(`${target}: ${error.message}`, { cause: error, details: { ...details, mcp_code: error.code } });
  }
  const errno = errnoOf(error);
  const reason = error instanceof Error ? error.message : String(error);
  if (errno === 'ENOENT') throw new ConfigurationError(`${target}: the server's command was not found (${reason})`, { cause: error });
  if (errno !== undefined && CONNECTION_CODES.has(errno)) throw new TransientError(`${target}: connection failed (${errno})`, { cause: error, details });
  if (error instanceof Error && /fetch failed|connection closed|socket|stream/i.test(error.message)) {
    throw new TransientError(`${target}: connection failed (${reason})`, { cause: error, details });
  }
  throw error;
};

export const makeMcpRunner = ({ env = process.env, allowStdio = true }: McpRunnerDeps = {}): NodeRunner<typeof McpParamsSchema> => {
  const run = async (params: McpParams, context: RunContext): Promise<RunnerResult> => {
    const { server: serverName, tool, arguments: args, __server: server } = params;
    const target = `MCP ${serverName}/${tool}`;
    if (server === undefined) throw new ConfigurationError(`MCP server '${serverName}' is not configured: declare it under "mcp_servers" or in the --mcp-config file`);
    const timeoutMs = mcpSpec.timeoutS(params) * 1000;
    const details = { server: serverName, tool };
    const [sdk, { withMcpClient }] = await loadMcpSdk();
    const { ErrorCode, McpError } = sdk;
    const started = performance.now();
    try {
      return await withMcpClient(server, { serverName, env, allowStdio }, async (client) => {
        let result: Awaited<ReturnType<McpClient['callTool']>>;
        try {
          result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs, ...(context.signal ? { signal: context.signal } : {}) });
        } catch (error) {
          // Bad arguments rejected by the protocol: the repairer gets the tool's schema, read while connected.
          if (!(error instanceof McpError) || error.code !== ErrorCode.InvalidParams) throw error;
          const inputSchema = await inputSchemaOf(client, tool);
          return toFailure(sdk, error, target, { ...details, ...(inputSchema ? { input_schema: inputSchema } : {}) }, performance.now() - started);
        }
        const durationMs = performance.now() - started;
        const content = (Array.isArray(result.content) ? result.content : []) as ContentBlock[];
        const text = textOf(content);
        const outputs = { result: result.structuredContent ?? text, is_error: result.isError === true, content };
        if (result.isError !== true) return { kind: 'ok', outputs, action: 'default', durationMs };
        const inputSchema = await inputSchemaOf(client, tool);
        return {
          kind: 'failed',
          error: {
            code: 'MCP_TOOL_ERROR',
            message: `${target} returned an error: ${sampleOf(text || result.structuredContent || 'no message', 300)}`,
            details: { ...details, text, ...(result.structuredContent ? { structured: result.structuredContent } : {}), ...(inputSchema ? { input_schema: inputSchema } : {}) },
          },
          outputs,
          durationMs,
        };
      });
    } catch (error) {
      return toFailure(sdk, error, target, details, performance.now() - started);
    }
  };

  return { ...mcpSpec, paramsSchema: McpParamsSchema, run };
};

export const mcpRunner: NodeRunner<typeof McpParamsSchema> = makeMcpRunner();
