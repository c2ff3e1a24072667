import type Anthropic from '@anthropic-ai/sdk';
import { envLlmConfig, type LlmConfigProvider, loadAnthropicSdk, makeAnthropicClient, type AnthropicClientOptions } from '../adapters/anthropic-client.ts';
import { ConfigurationError, TransientError } from '../core/index.ts';
import type { LlmUsage, NodeRunner, RunContext, RunnerResult } from '../core/index.ts';
import { ImageError, toImageBlock } from './llm-images.ts';
import { costUsd } from './llm-prices.ts';
import { DEFAULT_LLM_MODEL, type LlmParams, LlmParamsSchema, llmSpec, timeoutOf } from './llm-spec.ts';

export { DEFAULT_LLM_MODEL, LlmParamsSchema, type LlmParams } from './llm-spec.ts';

export interface LlmRunnerDeps {
  config: LlmConfigProvider;
  makeClient?: (options: AnthropicClientOptions) => Anthropic | Promise<Anthropic>;
}

const MISSING_KEY =
  'ANTHROPIC_API_KEY is not set: the llm node needs an Anthropic API key ' +
  '(set ANTHROPIC_API_KEY; on AWS, FLOWMEND_ANTHROPIC_SECRET_ID names the secret holding it)';

const failed = (code: string, message: string, details?: Record<string, unknown>, durationMs = 0): RunnerResult => ({
  kind: 'failed',
  error: { code, message, ...(details ? { details } : {}) },
  durationMs,
});

/**
 * Maps an SDK failure: throttling, overload, 5xx and network are transient (thrown for the Retry);
 * a rejected key or an empty account is configuration (thrown, never repaired); any other 4xx is a
 * bad request the workflow can fix (data). Anything else is a bug and propagates.
 */
const toFailure = async (error: unknown, model: string, durationMs: number): Promise<RunnerResult> => {
  const { APIConnectionError, APIError, APIUserAbortError } = await loadAnthropicSdk();
  if (error instanceof APIUserAbortError) return failed('ABORTED', 'LLM call cancelled: the run was cancelled', undefined, durationMs);
  if (error instanceof APIConnectionError) throw new TransientError(`LLM call failed: ${error.message}`, { cause: error });
  if (!(error instanceof APIError) || error.status === undefined) throw error;
  const status = error.status;
  const apiMessage = error.apiMessage ?? error.message;
  const details = { status_code: status, type: error.type, model, message: apiMessage };
  if (status === 429 || status === 529 || status >= 500 || error.type === 'overloaded_error') {
    throw new TransientError(`Anthropic API ${status} (${error.type ?? 'error'}): ${apiMessage}`, { cause: error, details });
  }
  if (status === 401 || status === 403 || status === 402 || /credit balance/i.test(apiMessage)) {
    throw new ConfigurationError(`Anthropic API rejected the request (${status}): ${apiMessage}; check ANTHROPIC_API_KEY`, { cause: error, details });
  }
  return failed('LLM_REQUEST_REJECTED', `Anthropic API ${status} (${error.type ?? 'error'}) for model ${model}: ${apiMessage}`, details, durationMs);
};

export const makeLlmRunner = ({ config, makeClient = makeAnthropicClient }: LlmRunnerDeps): NodeRunner<typeof LlmParamsSchema> => {
  const run = async (params: LlmParams, context: RunContext): Promise<RunnerResult> => {
    const { apiKey, baseURL, defaultModel } = await config();
    if (apiKey === undefined) throw new ConfigurationError(MISSING_KEY);
    if (context.signal?.aborted) return failed('ABORTED', 'LLM call not started: the run was cancelled');

    let images: Awaited<ReturnType<typeof toImageBlock>>[];
    try {
      images = await Promise.all((params.images ?? []).map((image) => toImageBlock(image, params.__workspace)));
    } catch (error) {
      if (!(error instanceof ImageError)) throw error;
      return failed('IMAGE_INVALID', error.message);
    }
    const model = params.model ?? defaultModel ?? DEFAULT_LLM_MODEL;
    const client = await makeClient({ apiKey, ...(baseURL ? { baseURL } : {}), timeoutMs: timeoutOf(params) * 1000 });
    const started = performance.now();
    let message: Anthropic.Message;
    try {
      message = await client.messages.create(
        {
          model,
          max_tokens: params.max_tokens,
          messages: [{ role: 'user', content: images.length === 0 ? params.prompt : [...images, { type: 'text', text: params.prompt }] }],
          ...(params.system === undefined ? {} : { system: params.system }),
          ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
        },
        context.signal ? { signal: context.signal } : undefined,
      );
    } catch (error) {
      return toFailure(error, model, performance.now() - started);
    }
    const durationMs = performance.now() - started;
    const response = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    const billedModel = message.model || model;
    const usage: LlmUsage = {
      model: billedModel,
      input_tokens: message.usage.input_tokens,
      output_tokens: message.usage.output_tokens,
      cost_usd: costUsd(billedModel, message.usage),
    };
    return { kind: 'ok', outputs: { response, usage, stop_reason: message.stop_reason }, action: 'default', durationMs, usage };
  };

  return { ...llmSpec, paramsSchema: LlmParamsSchema, run };
};

/** Reads ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL / FLOWMEND_LLM_MODEL from the environment on every call. */
export const llmRunner: NodeRunner<typeof LlmParamsSchema> = makeLlmRunner({ config: envLlmConfig() });
