import { makeCatalog, type NodeCatalog } from '../core/index.ts';
import { copyFileRunner, moveFileRunner } from './copy-move-file.ts';
import { deleteFileRunner } from './delete-file.ts';
import { mcpSpec } from './mcp-spec.ts';
import { readFileRunner } from './read-file.ts';
import { builtinSpecs } from './specs.ts';
import { writeFileRunner } from './write-file.ts';

/**
 * Every type the local host runs, as `flowmend validate` and `run` check workflows: the specs without
 * JSONata, the MCP SDK or the Anthropic SDK, which only the runners load (a test compares it with
 * localCatalog). Its own file, so that the Lambda bundles that import specs.ts do not carry the file nodes.
 */
export const localSpecCatalog: NodeCatalog = makeCatalog([...builtinSpecs, mcpSpec, readFileRunner, writeFileRunner, copyFileRunner, moveFileRunner, deleteFileRunner]);
