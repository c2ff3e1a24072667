import { Ajv } from 'ajv';
import { withMcpClient } from '../../adapters/mcp-client.ts';
import type { ValidationIssue, Workflow } from '../../core/index.ts';
import { findTemplates, isRecord, MCP_TYPE } from '../../core/index.ts';

type Tool = { name: string; inputSchema: unknown };

const listTools = async (workflow: Workflow, server: string, env: Readonly<Record<string, string | undefined>>): Promise<Tool[] | string> => {
  const config = workflow.mcp_servers?.[server];
  if (config === undefined) return `server '${server}' is not configured`;
  try {
    return await withMcpClient(config, { serverName: server, env, allowStdio: true }, async (client) => (await client.listTools()).tools);
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
};

/**
 * `validate --online`: asks each MCP server the workflow calls for its tools, then checks that every
 * tool exists and that arguments without templates match its input schema (JSON Schema, by Ajv).
 */
export const validateOnline = async (workflow: Workflow, env: Readonly<Record<string, string | undefined>>): Promise<ValidationIssue[]> => {
  const issues: ValidationIssue[] = [];
  const ajv = new Ajv({ allErrors: true, strict: false });
  const toolsOf = new Map<string, Promise<Tool[] | string>>();
  for (const [index, node] of workflow.nodes.entries()) {
    const { server, tool, arguments: args } = node.params;
    if (node.type !== MCP_TYPE || typeof server !== 'string' || typeof tool !== 'string') continue;
    if (!toolsOf.has(server)) toolsOf.set(server, listTools(workflow, server, env));
    const tools = await toolsOf.get(server);
    const path = `nodes[${index}].params`;
    if (typeof tools === 'string') {
      issues.push({
        path: `${path}.server`,
        code: 'MCP_SERVER_UNREACHABLE',
        message: `Node '${node.id}': cannot list the tools of MCP server '${server}': ${tools}`,
        severity: 'warning',
      });
      continue;
    }
    const found = tools?.find((t) => t.name === tool);
    if (found === undefined) {
      issues.push({
        path: `${path}.tool`,
        code: 'MCP_UNKNOWN_TOOL',
        message: `Node '${node.id}': MCP server '${server}' has no tool '${tool}'`,
        hint: `Tools: ${(tools ?? []).map((t) => t.name).join(', ')}`,
        severity: 'error',
      });
      continue;
    }
    if (!isRecord(found.inputSchema) || findTemplates(args).length > 0) continue;
    const validate = ajv.compile(found.inputSchema);
    if (!validate(args ?? {})) {
      for (const e of validate.errors ?? []) {
        issues.push({
          path: `${path}.arguments${e.instancePath.replace(/\//g, '.')}`,
          code: 'MCP_INVALID_ARGUMENTS',
          message: `Node '${node.id}': arguments of ${server}/${tool}${e.instancePath || ''} ${e.message ?? 'do not match the input schema'}`,
          hint: `Input schema: ${JSON.stringify(found.inputSchema)}`,
          severity: 'error',
        });
      }
    }
  }
  return issues;
};
