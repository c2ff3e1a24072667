import { makeCatalog, type NodeCatalog, type NodeRunner } from '../core/index.ts';
import { copyFileRunner, moveFileRunner } from './copy-move-file.ts';
import { deleteFileRunner } from './delete-file.ts';
import { httpRunner } from './http.ts';
import { llmRunner } from './llm.ts';
import { mcpRunner } from './mcp.ts';
import { readFileRunner } from './read-file.ts';
import { shellRunner } from './shell.ts';
import { transformRunner } from './transform.ts';
import { writeFileRunner } from './write-file.ts';

/** The node types both hosts run (each has a runner Lambda on AWS). */
export const builtinRunners: readonly NodeRunner[] = [
  shellRunner,
  transformRunner,
  httpRunner,
  llmRunner,
  mcpRunner,
];

/** The file family: the local host only (a run there has a workspace; see FILE_NODE_TYPES). */
export const fileRunners: readonly NodeRunner[] = [readFileRunner, writeFileRunner, copyFileRunner, moveFileRunner, deleteFileRunner];

export const builtinCatalog: NodeCatalog = makeCatalog(builtinRunners);

/** What the local host runs: every builtin type and the file family. */
export const localRunners: readonly NodeRunner[] = [...builtinRunners, ...fileRunners];
export const localCatalog: NodeCatalog = makeCatalog(localRunners);
