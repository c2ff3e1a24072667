import { shellRunner } from '../../nodes/shell.ts';
import { bundledSecretResolver } from './bundled-secret-resolver.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(shellRunner, { secrets: bundledSecretResolver });
