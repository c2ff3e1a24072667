import { makeMcpTools } from '../../adapters/mcp-tools.ts';
import { makeMcpRunner } from '../../nodes/mcp.ts';
import { bundledSecretResolver } from './bundled-secret-resolver.ts';
import { makeRunNodeHandler } from './run-node.ts';

/**
 * On AWS an MCP server is reached over Streamable HTTP only: a Lambda cannot keep a stdio server
 * process. `${VAR}` references in a server's headers read this function's environment.
 */
export const handler = makeRunNodeHandler(makeMcpRunner({ tools: makeMcpTools({ env: process.env, allowStdio: false }) }), { secrets: bundledSecretResolver });
