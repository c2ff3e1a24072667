import type { LlmClient, LlmConfigProvider, LlmImage, LlmUsage, NodeRunner, RunContext, RunnerResult } from '../core/index.ts';
import { ConfigurationError } from '../core/index.ts';
import { ImageError, toImageBlock } from './llm-images.ts';
import { costUsd } from './llm-prices.ts';
import { DEFAULT_LLM_MODEL, type LlmParams, LlmParamsSchema, llmSpec, timeoutOf } from './llm-spec.ts';
import { monotonicMs } from './monotonic-clock.ts';

export { DEFAULT_LLM_MODEL, type LlmParams, LlmParamsSchema } from './llm-spec.ts';

/** The runner's ports, injected by the host: its configuration (key, endpoint, default model) and the client that sends the message. */
export interface LlmRunnerDeps {
  config: LlmConfigProvider;
  client: LlmClient;
}

const MISSING_KEY =
  'ANTHROPIC_API_KEY is not set: the llm node needs an Anthropic API key ' +
  '(set ANTHROPIC_API_KEY; on AWS, FLOWMEND_ANTHROPIC_SECRET_ID names the secret holding it)';

const failed = (code: string, message: string, details?: Record<string, unknown>, durationMs = 0): RunnerResult => ({
  kind: 'failed',
  error: { code, message, ...(details ? { details } : {}) },
  durationMs,
});

export const makeLlmRunner = ({ config, client }: LlmRunnerDeps): NodeRunner<typeof LlmParamsSchema> => {
  const run = async (params: LlmParams, context: RunContext): Promise<RunnerResult> => {
    const { apiKey, baseURL, defaultModel } = await config();
    if (apiKey === undefined) throw new ConfigurationError(MISSING_KEY);
    if (context.signal?.aborted) return failed('ABORTED', 'LLM call not started: the run was cancelled');

    let images: LlmImage[];
    try {
      images = await Promise.all((params.images ?? []).map((image) => toImageBlock(image, params.__workspace)));
    } catch (error) {
      if (!(error instanceof ImageError)) throw error;
      return failed('IMAGE_INVALID', error.message);
    }
    const model = params.model ?? defaultModel ?? DEFAULT_LLM_MODEL;
    const started = monotonicMs();
    const result = await client.send({
      apiKey,
      ...(baseURL ? { baseURL } : {}),
      model,
      maxTokens: params.max_tokens,
      prompt: params.prompt,
      images,
      ...(params.system === undefined ? {} : { system: params.system }),
      ...(params.cached_context === undefined ? {} : { cachedContext: params.cached_context, cacheTtl: params.cache_ttl ?? '5m' }),
      ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
      timeoutMs: timeoutOf(params) * 1000,
      ...(context.signal ? { signal: context.signal } : {}),
    });
    const durationMs = monotonicMs() - started;
    switch (result.kind) {
      case 'aborted':
        return failed('ABORTED', 'LLM call cancelled: the run was cancelled', undefined, durationMs);
      case 'rejected': {
        const details = { status_code: result.status, type: result.type, model, message: result.message };
        return failed(
          'LLM_REQUEST_REJECTED',
          `Anthropic API ${result.status} (${result.type ?? 'error'}) for model ${model}: ${result.message}`,
          details,
          durationMs,
        );
      }
      case 'message': {
        const billedModel = result.model || model;
        const usage: LlmUsage = { model: billedModel, ...result.usage, cost_usd: costUsd(billedModel, result.usage) };
        return { kind: 'ok', outputs: { response: result.text, usage, stop_reason: result.stopReason }, action: 'default', durationMs, usage };
      }
    }
  };

  return { ...llmSpec, paramsSchema: LlmParamsSchema, run };
};
