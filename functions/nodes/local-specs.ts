import { makeCatalog, type NodeCatalog } from '../core/index.ts';
import { copyFileSpec, deleteFileSpec, moveFileSpec, readFileSpec, writeFileSpec } from './file-specs.ts';
import { builtinSpecs } from './specs.ts';
import { engineNodeSpecs } from './workflow.ts';

/**
 * Every type the local host runs, as `flowmend validate` and `run` check workflows: the specs without
 * node:child_process, file access, JSONata, the MCP SDK or the Anthropic SDK, which only the runners
 * load (a test compares it with the local runners). Its own file, so that the Lambda bundles that
 * import specs.ts do not carry the file nodes.
 */
export const localSpecCatalog: NodeCatalog = makeCatalog([
  ...builtinSpecs,
  readFileSpec,
  writeFileSpec,
  copyFileSpec,
  moveFileSpec,
  deleteFileSpec,
  ...engineNodeSpecs,
]);
