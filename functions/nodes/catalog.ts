import { makeCatalog, type NodeCatalog, type NodeRunner } from '../core/node-type.ts';
import type { Limits } from '../core/limits.ts';
import { httpRunner, makeHttpRunner } from './http.ts';
import { llmRunner } from './llm.ts';
import { makeShellRunner, shellRunner } from './shell.ts';
import { transformRunner } from './transform.ts';

/** Every node type this build can run. http and llm are added here, next to shell and transform. */
export const builtinRunners: readonly NodeRunner[] = [
  shellRunner,
  transformRunner,
  httpRunner,
  llmRunner,
];

export const builtinCatalog: NodeCatalog = makeCatalog(builtinRunners);

/** The built-in runners with the output limits given (the CLI reads them from its environment). */
export const makeBuiltinRunners = (limits: Pick<Limits, 'maxOutputBytes' | 'maxHttpResponseBytes'>): readonly NodeRunner[] => [
  makeShellRunner({ maxOutputBytes: limits.maxOutputBytes }),
  transformRunner,
  makeHttpRunner({ maxResponseBytes: limits.maxHttpResponseBytes }),
  llmRunner,
];
