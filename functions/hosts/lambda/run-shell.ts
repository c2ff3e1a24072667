import { awsSecretResolver } from '../../adapters/aws-secret-resolver.ts';
import { shellRunner } from '../../nodes/shell.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(shellRunner, { secrets: awsSecretResolver });
