import { makeCatalog, type Limits, type NodeCatalog, type NodeRunner } from '../core/index.ts';
import { copyFileRunner, moveFileRunner } from './copy-move-file.ts';
import { deleteFileRunner } from './delete-file.ts';
import { httpRunner, makeHttpRunner } from './http.ts';
import { llmRunner } from './llm.ts';
import { mcpRunner } from './mcp.ts';
import { readFileRunner } from './read-file.ts';
import { makeShellRunner, shellRunner } from './shell.ts';
import { transformRunner } from './transform.ts';
import { writeFileRunner } from './write-file.ts';
import { engineNodeSpecs } from './workflow.ts';

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

export const builtinCatalog: NodeCatalog = makeCatalog([...builtinRunners, ...engineNodeSpecs]);

/** What the local host runs: every builtin type and the file family. */
export const localRunners: readonly NodeRunner[] = [...builtinRunners, ...fileRunners];
export const localCatalog: NodeCatalog = makeCatalog([...localRunners, ...engineNodeSpecs]);

/** The local host's runners with the output limits given (the CLI reads them from its environment). */
export const makeLocalRunners = (limits: Pick<Limits, 'maxOutputBytes' | 'maxHttpResponseBytes'>): readonly NodeRunner[] => [
  makeShellRunner({ maxOutputBytes: limits.maxOutputBytes }),
  transformRunner,
  makeHttpRunner({ maxResponseBytes: limits.maxHttpResponseBytes }),
  llmRunner,
  mcpRunner,
  ...fileRunners,
];
