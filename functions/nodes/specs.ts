import { makeCatalog, type NodeCatalog, type NodeTypeSpec } from '../core/index.ts';
import { httpRunner } from './http.ts';
import { llmSpec } from './llm-spec.ts';

import { shellRunner } from './shell.ts';
import { transformSpec } from './transform-spec.ts';

/**
 * The node types as the engine sees them (params, outputs, side effects, timeouts), without what
 * only a runner needs: the Advance and StartRun Lambdas bundle this, not the Anthropic SDK.
 * Keep it in step with `builtinRunners` (catalog.ts); a test compares the two.
 */
export const builtinSpecs: readonly NodeTypeSpec[] = [shellRunner, transformSpec, httpRunner, llmSpec];

export const builtinSpecCatalog: NodeCatalog = makeCatalog(builtinSpecs);
