import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ConfigurationError, isEngineVariable, isHttpServer, type McpServer } from '../core/index.ts';

const CLIENT_INFO = { name: 'flowmend', version: '0.1.0' };
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

/** `${VAR}` and `${VAR:-default}` from the environment (pflow's syntax); an unset variable without a default is configuration to fix. */
export const expandReferences = (text: string, env: Readonly<Record<string, string | undefined>>, where: string): string =>
  text.replace(REFERENCE, (_m, name: string, fallback: string | undefined) => {
    if (isEngineVariable(name)) {
      throw new ConfigurationError(
        `${where} reads \${${name}}: the engine's own variables (AWS_*, ANTHROPIC_*, FLOWMEND_*) are never given to a workflow's MCP server; set a variable of its own`,
      );
    }
    const value = env[name] ?? fallback;
    if (value === undefined) throw new ConfigurationError(`${where} reads \${${name}}, but ${name} is not set in the environment of the mcp runner`);
    return value;
  });

const expandMap = (map: Record<string, string> | undefined, env: Readonly<Record<string, string | undefined>>, where: string): Record<string, string> =>
  Object.fromEntries(Object.entries(map ?? {}).map(([k, v]) => [k, expandReferences(v, env, `${where}.${k}`)]));

export interface McpConnectOptions {
  serverName: string;
  env: Readonly<Record<string, string | undefined>>;
  /** false on AWS: a Lambda cannot keep a server process of its own. */
  allowStdio: boolean;
}

const makeTransport = (server: McpServer, { serverName, env, allowStdio }: McpConnectOptions): Transport => {
  const where = `MCP server '${serverName}'`;
  if (isHttpServer(server)) {
    const headers = expandMap(server.headers, env, `${where} headers`);
    if (server.auth?.type === 'bearer') headers.Authorization ??= `Bearer ${expandReferences(server.auth.token, env, `${where} auth.token`)}`;
    if (server.auth?.type === 'api_key') headers[server.auth.header ?? 'X-API-Key'] ??= expandReferences(server.auth.key, env, `${where} auth.key`);
    return new StreamableHTTPClientTransport(new URL(expandReferences(server.url, env, `${where} url`)), { requestInit: { headers } });
  }
  if (!allowStdio) {
    throw new ConfigurationError(
      `${where} is a stdio server (command '${server.command}'), which this host cannot start: on AWS, MCP servers are reached over Streamable HTTP ("type": "http", "url": ...)`,
    );
  }
  return new StdioClientTransport({
    command: server.command,
    args: server.args ?? [],
    env: { ...getDefaultEnvironment(), ...expandMap(server.env as Record<string, string> | undefined, env, `${where} env`) },
    ...(server.cwd ? { cwd: server.cwd } : {}),
    stderr: 'ignore',
  });
};

/** Connects to one server, runs `use` with the client, and always closes it (a stdio server process is stopped). */
export const withMcpClient = async <T>(server: McpServer, options: McpConnectOptions, use: (client: Client) => Promise<T>): Promise<T> => {
  const client = new Client(CLIENT_INFO);
  await client.connect(makeTransport(server, options));
  try {
    return await use(client);
  } finally {
    await client.close().catch(() => undefined);
  }
};

export type { Client as McpClient };
