import { awsSecretResolver } from '../../adapters/aws-secret-resolver.ts';
import { httpRunner } from '../../nodes/http.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(httpRunner, { secrets: awsSecretResolver });
