import { transformRunner } from '../../nodes/transform.ts';
import { bundledSecretResolver } from './bundled-secret-resolver.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(transformRunner, { secrets: bundledSecretResolver });
