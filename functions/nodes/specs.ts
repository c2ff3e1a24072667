import { makeCatalog, type NodeCatalog, type NodeTypeSpec } from '../core/index.ts';
import { codeSpec } from './code-spec.ts';
import { httpSpec } from './http-spec.ts';
import { llmSpec } from './llm-spec.ts';
import { mcpSpec } from './mcp-spec.ts';
import { shellSpec } from './shell-spec.ts';
import { transformSpec } from './transform-spec.ts';
import { engineNodeSpecs } from './workflow.ts';

/**
 * The node types as the engine sees them (params, outputs, side effects, timeouts), without what
 * only a runner needs: the Advance and StartRun Lambdas bundle this, not the Anthropic SDK.
 * Keep it in step with `makeBuiltinRunners` (catalog.ts); a test compares the two.
 */
export const builtinSpecs: readonly NodeTypeSpec[] = [shellSpec, transformSpec, httpSpec, llmSpec, mcpSpec, codeSpec];

export const builtinSpecCatalog: NodeCatalog = makeCatalog([...builtinSpecs, ...engineNodeSpecs]);
