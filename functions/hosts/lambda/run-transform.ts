import { awsSecretResolver } from '../../adapters/aws-secret-resolver.ts';
import { transformRunner } from '../../nodes/transform.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(transformRunner, { secrets: awsSecretResolver });
