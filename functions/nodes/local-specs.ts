import { makeCatalog, type NodeCatalog } from '../core/index.ts';
import { copyFileRunner, moveFileRunner } from './copy-move-file.ts';
import { deleteFileRunner } from './delete-file.ts';
import { readFileRunner } from './read-file.ts';
import { builtinSpecs } from './specs.ts';
import { engineNodeSpecs } from './workflow.ts';
import { writeFileRunner } from './write-file.ts';

/**
 * Every type the local host runs, as `flowmend validate` and `run` check workflows: the specs without
 * JSONata, the MCP SDK or the Anthropic SDK, which only the runners load (a test compares it with
 * the local runners). Its own file, so that the Lambda bundles that import specs.ts do not carry the file nodes.
 */
export const localSpecCatalog: NodeCatalog = makeCatalog([
  ...builtinSpecs,
  readFileRunner,
  writeFileRunner,
  copyFileRunner,
  moveFileRunner,
  deleteFileRunner,
  ...engineNodeSpecs,
]);
