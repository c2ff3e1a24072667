import { transformRunner } from '../../nodes/transform.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(transformRunner);
