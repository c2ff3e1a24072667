import * as z from 'zod';
import { ClassificationRulesSchema } from '../core/ir.ts';
import type { NodeTypeSpec } from '../core/node-type.ts';

/**
 * What the engine knows of the llm node without the Anthropic SDK: the engine and StartRun Lambdas
 * validate and time llm nodes from this, and only the runner (llm.ts) bundles the SDK.
 */
export const DEFAULT_LLM_MODEL = 'claude-haiku-4-5';
export const DEFAULT_TIMEOUT_S = 120;

export const LlmParamsSchema = z.strictObject({
  prompt: z.string({ error: 'prompt is required: the text sent to the model' }).min(1, 'prompt must not be empty'),
  system: z.string({ error: 'system must be a string' }).optional(),
  model: z.string({ error: 'model must be a model id such as "claude-haiku-4-5"' }).min(1).optional(),
  max_tokens: z.number({ error: 'max_tokens must be a number' }).int('max_tokens must be a whole number').positive().default(1024),
  temperature: z.number({ error: 'temperature must be a number' }).min(0, 'temperature is 0 to 1').max(1, 'temperature is 0 to 1').optional(),
  timeout_s: z.number({ error: 'timeout_s must be a number of seconds' }).positive().optional(),
  /** Reserved: the workflow's classification rules, passed by the engine only when the workflow has some. */
  __classification: ClassificationRulesSchema.optional(),
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
};
