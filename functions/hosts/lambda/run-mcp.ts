import { awsSecretResolver } from '../../adapters/aws-secret-resolver.ts';
import { makeMcpRunner } from '../../nodes/mcp.ts';
import { makeRunNodeHandler } from './run-node.ts';

/**
 * On AWS an MCP server is reached over Streamable HTTP only: a Lambda cannot keep a stdio server
 * process. `${VAR}` references in a server's headers read this function's environment.
 */
export const handler = makeRunNodeHandler(makeMcpRunner({ allowStdio: false }), { secrets: awsSecretResolver });
