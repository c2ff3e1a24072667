import { builtOnFirstUse } from './lazy-schema.ts';
import * as z from './zod.ts';

/**
 * One MCP server, in the shape of pflow's `mcp-servers.json` entries (the standard `mcpServers`
 * format): stdio when `type` is absent, Streamable HTTP when it is "http". Values may hold
 * `${VAR}` / `${VAR:-default}` references, expanded from the runner's environment at call time,
 * so a token never has to be written into a workflow or a run record.
 */
const StringMapSchema = builtOnFirstUse(() => z.record(z.string(), z.string({ error: 'values must be strings (use "${VAR}" to read the environment)' })));

export const McpStdioServerSchema = builtOnFirstUse(() =>
  z.looseObject({
    type: z.optional(z.literal('stdio')),
    command: z.string({ error: 'a stdio MCP server needs "command"' }).check(z.minLength(1, 'command must not be empty')),
    args: z.optional(z.array(z.string(), { error: 'args must be an array of strings' })),
    env: z.optional(StringMapSchema),
    cwd: z.optional(z.string()),
  }),
);

export const McpHttpServerSchema = builtOnFirstUse(() =>
  z.looseObject({
    type: z.enum(['http', 'streamable-http', 'streamable_http'], { error: 'type is "http" (Streamable HTTP) or absent (stdio)' }),
    url: z.string({ error: 'an http MCP server needs "url"' }).check(z.regex(/^https?:\/\//, 'url must start with http:// or https://')),
    headers: z.optional(StringMapSchema),
    /** pflow's auth block: a bearer token or an API key header. */
    auth: z.optional(
      z.union(
        [z.object({ type: z.literal('bearer'), token: z.string() }), z.object({ type: z.literal('api_key'), key: z.string(), header: z.optional(z.string()) })],
        { error: 'auth is {"type": "bearer", "token": "${VAR}"} or {"type": "api_key", "key": "${VAR}", "header": "X-API-Key"}' },
      ),
    ),
    /** Seconds for one request. */
    timeout: z.optional(z.number().check(z.positive())),
    env: z.optional(StringMapSchema),
  }),
);

export const McpServerSchema = builtOnFirstUse(() =>
  z.union([McpHttpServerSchema, McpStdioServerSchema], {
    error: 'an MCP server is {"command": ..., "args": [...]} (stdio) or {"type": "http", "url": ...}',
  }),
);
export type McpServer = z.infer<typeof McpServerSchema>;

export const McpServersSchema = builtOnFirstUse(() => z.record(z.string(), McpServerSchema));
export type McpServers = z.infer<typeof McpServersSchema>;

/** pflow's config file: `{ "mcpServers": { name: server } }`. */
export const McpConfigFileSchema = builtOnFirstUse(() => z.looseObject({ mcpServers: z._default(McpServersSchema, {}) }));

export const isHttpServer = (server: McpServer): server is z.infer<typeof McpHttpServerSchema> =>
  'url' in server && server.type !== undefined && server.type !== 'stdio';

export const MCP_TYPE = 'mcp';
const ALIAS_PREFIX = 'mcp-';

/**
 * pflow names a tool call `mcp-<server>-<tool>`. Both parts may hold hyphens, so the longest known
 * server name that fits wins; with none known, the server is the part before the next hyphen.
 */
export const splitMcpAlias = (type: string, knownServers: readonly string[]): { server: string; tool: string } | undefined => {
  if (!type.startsWith(ALIAS_PREFIX)) return undefined;
  const rest = type.slice(ALIAS_PREFIX.length);
  const known = knownServers.filter((s) => rest.startsWith(`${s}-`) && rest.length > s.length + 1).sort((a, b) => b.length - a.length)[0];
  if (known !== undefined) return { server: known, tool: rest.slice(known.length + 1) };
  const dash = rest.indexOf('-');
  if (dash <= 0 || dash === rest.length - 1) return undefined;
  return { server: rest.slice(0, dash), tool: rest.slice(dash + 1) };
};

/** Header and env names whose literal values would be secrets stored in plain text. */
const SECRET_NAME = /auth|token|key|secret|password|passwd|cookie|credential/i;
const REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\}/;

/** Places in a server's config where a secret is written as a literal instead of a `${VAR}` reference. */
export const plainTextSecrets = (server: McpServer): string[] => {
  const found: string[] = [];
  const check = (where: string, map: Record<string, string> | undefined) => {
    for (const [name, value] of Object.entries(map ?? {})) {
      if (SECRET_NAME.test(name) && value.trim() !== '' && !REFERENCE.test(value)) found.push(`${where}.${name}`);
    }
  };
  check('env', server.env as Record<string, string> | undefined);
  if (isHttpServer(server)) {
    check('headers', server.headers);
    if (server.auth?.type === 'bearer' && !REFERENCE.test(server.auth.token)) found.push('auth.token');
    if (server.auth?.type === 'api_key' && !REFERENCE.test(server.auth.key)) found.push('auth.key');
  }
  return found;
};
