import { httpRunner } from '../../nodes/http.ts';
import { bundledSecretResolver } from './bundled-secret-resolver.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(httpRunner, { secrets: bundledSecretResolver });
