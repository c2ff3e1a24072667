import type { NodeTypeSpec } from '../core/index.ts';
import * as z from '../core/zod.ts';

/**
 * What the engine knows of the llm node without the Anthropic SDK: the engine and StartRun Lambdas
 * validate and time llm nodes from this, and only the runner (llm.ts) bundles the SDK.
 */
export const DEFAULT_LLM_MODEL = 'claude-haiku-4-5';
export const DEFAULT_TIMEOUT_S = 120;

export const LlmParamsSchema = z.strictObject({
  prompt: z.string({ error: 'prompt is required: the text sent to the model' }).check(z.minLength(1, 'prompt must not be empty')),
  system: z.optional(z.string({ error: 'system must be a string' })),
  model: z.optional(z.string({ error: 'model must be a model id such as "claude-haiku-4-5"' }).check(z.minLength(1))),
  max_tokens: z._default(z.number({ error: 'max_tokens must be a number' }).check(z.int('max_tokens must be a whole number'), z.positive()), 1024),
  temperature: z.optional(z.number({ error: 'temperature must be a number' }).check(z.gte(0, 'temperature is 0 to 1'), z.lte(1, 'temperature is 0 to 1'))),
  timeout_s: z.optional(z.number({ error: 'timeout_s must be a number of seconds' }).check(z.positive())),
  /** pflow's images: http(s) or data: URLs, or image files in the workspace (see llm-images.ts). */
  images: z.optional(z.array(z.string().check(z.minLength(1, 'an image is a URL or a file path')), { error: 'images must be an array of URLs or file paths' })),
  /**
   * Text sent before the system prompt as a prefix the provider caches (pflow's `## Cache` chunks named by
   * `prompt_cache`, lowered to this param when the workflow is read: core/pflow-prompt-cache.ts).
   */
  cached_context: z.optional(
    z
      .array(z.string({ error: 'cached_context holds text' }), { error: 'cached_context is a list of text blocks' })
      .check(z.minLength(1), z.maxLength(4, 'cached_context takes at most 4 blocks')),
  ),
  /** How long the provider keeps the cached prefix: 5 minutes (default) or 1 hour. */
  cache_ttl: z.optional(z.enum(['5m', '1h'], { error: 'cache_ttl is "5m" or "1h"' })),
  /** Reserved: the run's workspace, where image files are read (the local host). */
  __workspace: z.optional(z.string()),
});
export type LlmParams = z.infer<typeof LlmParamsSchema>;

export const timeoutOf = (params: Record<string, unknown>): number =>
  typeof params.timeout_s === 'number' && params.timeout_s > 0 ? params.timeout_s : DEFAULT_TIMEOUT_S;

export const llmSpec: NodeTypeSpec = {
  type: 'llm',
  paramsSchema: LlmParamsSchema,
  outputKeys: ['response', 'usage', 'stop_reason'],
  sideEffects: () => false,
  timeoutS: timeoutOf,
  capabilities: { apiResponse: true },
};
