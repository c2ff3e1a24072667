import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ValidationIssue } from '../../core/index.ts';
import { formatIssuePath, McpConfigFileSchema, type McpServers } from '../../core/index.ts';

/** Where pflow keeps its servers; read when no file is named, and only if it exists. */
export const PFLOW_MCP_CONFIG = join(homedir(), '.pflow', 'mcp-servers.json');

export type LoadedMcpConfig = { ok: true; servers: McpServers } | { ok: false; issues: ValidationIssue[] };

/** Reads pflow's `{ "mcpServers": {...} }` file as is; a file that was named must exist and parse. */
export const loadMcpConfig = async (path: string | undefined): Promise<LoadedMcpConfig> => {
  const file = path ?? PFLOW_MCP_CONFIG;
  const problem = (message: string, hint?: string): LoadedMcpConfig => ({
    ok: false,
    issues: [{ path: file, code: 'MCP_CONFIG_INVALID', message, severity: 'error', ...(hint ? { hint } : {}) }],
  });
  let text: string;
  try {
    // Synchronous, as the workflow file's read: a command reads a file or two, and node:fs/promises costs ~2 ms to load.
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (path === undefined && (error as NodeJS.ErrnoException).code === 'ENOENT') return { ok: true, servers: {} };
    return problem(`cannot read MCP config '${file}': ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return problem(`MCP config '${file}' is not valid JSON: ${(error as Error).message}`);
  }
  const parsed = McpConfigFileSchema.safeParse(raw);
  if (!parsed.success) {
    return {
      ok: false,
      issues: parsed.error.issues.map((i) => ({
        path: `${file}: ${formatIssuePath(i.path)}`,
        code: 'MCP_CONFIG_INVALID',
        message: `MCP config ${formatIssuePath(i.path) || '(file)'}: ${i.message}`,
        hint: 'pflow\'s shape: {"mcpServers": {"name": {"command": "npx", "args": [...]} or {"type": "http", "url": "https://..."}}}',
        severity: 'error',
      })),
    };
  }
  return { ok: true, servers: parsed.data.mcpServers };
};
