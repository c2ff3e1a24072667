import { shellRunner } from '../../nodes/shell.ts';
import { makeRunNodeHandler } from './run-node.ts';

export const handler = makeRunNodeHandler(shellRunner);
