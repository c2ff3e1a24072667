import { makeCatalog, type NodeCatalog, type NodeRunner } from '../core/index.ts';
import { httpRunner } from './http.ts';
import { llmRunner } from './llm.ts';
import { shellRunner } from './shell.ts';
import { transformRunner } from './transform.ts';

/** Every node type this build can run. http and llm are added here, next to shell and transform. */
export const builtinRunners: readonly NodeRunner[] = [
  shellRunner,
  transformRunner,
  httpRunner,
  llmRunner,
];

export const builtinCatalog: NodeCatalog = makeCatalog(builtinRunners);
