import type { McpToolCall, McpToolOutcome, McpTools } from '../core/index.ts';
import { ConfigurationError, TransientError } from '../core/index.ts';
import type { McpClient } from './mcp-client.ts';

type McpSdkTypes = typeof import('@modelcontextprotocol/sdk/types.js');

/** The MCP SDK loads with the first tool call of a process, not with every local run (CLI start-up). */
const loadMcpSdk = () => Promise.all([import('@modelcontextprotocol/sdk/types.js'), import('./mcp-client.ts')]);

export interface McpToolsOptions {
  /** Where `${VAR}` references in a server's configuration are read. */
  env: Readonly<Record<string, string | undefined>>;
  /** false on AWS (Streamable HTTP only). */
  allowStdio: boolean;
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

const errnoOf = (error: unknown): string | undefined => {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
};

const toolsOf = async (client: McpClient): Promise<{ name: string; inputSchema?: unknown }[] | undefined> => {
  try {
    return (await client.listTools()).tools;
  } catch {
    return undefined;
  }
};

const inputSchemaOf = async (client: McpClient, tool: string): Promise<unknown> => (await toolsOf(client))?.find((t) => t.name === tool)?.inputSchema;

/**
 * A tool the server does not list: the workflow named it wrong (servers answer "Tool x not found" as an
 * error result or a protocol error), a typo the repairer can fix given the names there are.
 */
const unknownTool = async (client: McpClient, tool: string, message: string): Promise<McpToolOutcome | undefined> => {
  const tools = await toolsOf(client);
  if (tools === undefined || tools.some((t) => t.name === tool)) return undefined;
  return { kind: 'refused', reason: 'unknown_tool', message, availableTools: tools.map((t) => t.name) };
};

const withSchema = (inputSchema: unknown): { inputSchema?: unknown } => (inputSchema === undefined ? {} : { inputSchema });

/**
 * Maps what the SDK threw: bad arguments or an unknown tool are the workflow's to fix (`refused`);
 * other protocol errors and lost connections are transient (thrown for the state machine's Retry);
 * a command that does not exist is configuration. Anything else is a bug and propagates.
 */
const toOutcome = (
  { ErrorCode, McpError }: McpSdkTypes,
  error: unknown,
  target: string,
  details: Record<string, unknown>,
  inputSchema?: unknown,
): McpToolOutcome => {
  if (error instanceof ConfigurationError || error instanceof TransientError) throw error;
  if (error instanceof McpError) {
    if (error.code === ErrorCode.InvalidParams || error.code === ErrorCode.MethodNotFound) {
      return {
        kind: 'refused',
        reason: error.code === ErrorCode.InvalidParams ? 'invalid_arguments' : 'unknown_tool',
        message: error.message,
        ...withSchema(inputSchema),
      };
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

/** The mcp node's McpTools on the MCP SDK: one connection per call (a stdio server process is stopped after it). */
export const makeMcpTools = ({ env, allowStdio }: McpToolsOptions): McpTools => ({
  async call(request: McpToolCall): Promise<McpToolOutcome> {
    const { serverName, server, tool } = request;
    const target = `MCP ${serverName}/${tool}`;
    const details = { server: serverName, tool };
    const [sdk, { withMcpClient }] = await loadMcpSdk();
    const { ErrorCode, McpError } = sdk;
    try {
      return await withMcpClient(server, { serverName, env, allowStdio }, async (client) => {
        let result: Awaited<ReturnType<McpClient['callTool']>>;
        try {
          result = await client.callTool({ name: tool, arguments: request.arguments }, undefined, {
            timeout: request.timeoutMs,
            ...(request.signal ? { signal: request.signal } : {}),
          });
        } catch (error) {
          if (error instanceof McpError && error.code === ErrorCode.MethodNotFound) {
            const unknown = await unknownTool(client, tool, error.message);
            if (unknown !== undefined) return unknown;
          }
          // Bad arguments rejected by the protocol: the repairer gets the tool's schema, read while connected.
          if (!(error instanceof McpError) || error.code !== ErrorCode.InvalidParams) throw error;
          return toOutcome(sdk, error, target, details, await inputSchemaOf(client, tool));
        }
        const content = Array.isArray(result.content) ? result.content : [];
        const isError = result.isError === true;
        if (isError) {
          const text = content.flatMap((c) => (c.type === 'text' && typeof c.text === 'string' ? [c.text] : [])).join('\n');
          const unknown = await unknownTool(client, tool, text || `tool '${tool}' not found`);
          if (unknown !== undefined) return unknown;
        }
        return {
          kind: 'result',
          content,
          isError,
          ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
          ...(isError ? withSchema(await inputSchemaOf(client, tool)) : {}),
        };
      });
    } catch (error) {
      return toOutcome(sdk, error, target, details);
    }
  },
});
