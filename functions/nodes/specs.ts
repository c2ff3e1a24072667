import { makeCatalog, type NodeCatalog, type NodeTypeSpec } from '../core/index.ts';
import { httpRunner } from './http.ts';
import { llmSpec } from './llm-spec.ts';
import { mcpSpec } from './mcp-spec.ts';
import { copyFileRunner, moveFileRunner } from './copy-move-file.ts';
import { deleteFileRunner } from './delete-file.ts';
import { readFileRunner } from './read-file.ts';
import { writeFileRunner } from './write-file.ts';
import { shellRunner } from './shell.ts';
import { transformSpec } from './transform-spec.ts';

/**
 * The node types as the engine sees them (params, outputs, side effects, timeouts), without what
 * only a runner needs: the Advance and StartRun Lambdas bundle this, not the Anthropic SDK.
 * Keep it in step with `builtinRunners` (catalog.ts); a test compares the two.
 */
export const builtinSpecs: readonly NodeTypeSpec[] = [shellRunner, transformSpec, httpRunner, llmSpec];

export const builtinSpecCatalog: NodeCatalog = makeCatalog(builtinSpecs);

/**
 * Every type the local host runs, as `flowmend validate` and `run` check workflows: the specs without
 * JSONata, the MCP SDK or the Anthropic SDK, which only the runners load (a test compares it with localCatalog).
 */
export const localSpecCatalog: NodeCatalog = makeCatalog([...builtinSpecs, mcpSpec, readFileRunner, writeFileRunner, copyFileRunner, moveFileRunner, deleteFileRunner]);
