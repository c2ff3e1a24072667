import type Anthropic from '@anthropic-ai/sdk';
import type { LlmClient, LlmMessageRequest, LlmMessageResult } from '../core/index.ts';
import { ConfigurationError, TransientError } from '../core/index.ts';
import { type AnthropicClientOptions, loadAnthropicSdk, makeAnthropicClient } from './anthropic-client.ts';

/**
 * Maps an SDK failure: throttling, overload, 5xx and network are transient (thrown for the Retry);
 * a rejected key or an empty account is configuration (thrown, never repaired); any other 4xx is a
 * bad request the workflow can fix (`rejected`). Anything else is a bug and propagates.
 */
const toResult = async (error: unknown, model: string): Promise<LlmMessageResult> => {
  const { APIConnectionError, APIError, APIUserAbortError } = await loadAnthropicSdk();
  if (error instanceof APIUserAbortError) return { kind: 'aborted' };
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
  return { kind: 'rejected', status, ...(error.type ? { type: error.type } : {}), message: apiMessage };
};

/**
 * The system prompt: the cached context first, its last block marked as the end of the cached prefix (with
 * its TTL), then the node's own system text, uncached.
 */
const systemOf = (request: LlmMessageRequest): string | Anthropic.TextBlockParam[] | undefined => {
  const cached = request.cachedContext ?? [];
  if (cached.length === 0) return request.system;
  const blocks: Anthropic.TextBlockParam[] = cached.map((text, i) => ({
    type: 'text',
    text,
    ...(i === cached.length - 1 ? { cache_control: { type: 'ephemeral', ttl: request.cacheTtl ?? '5m' } } : {}),
  }));
  return request.system === undefined ? blocks : [...blocks, { type: 'text', text: request.system }];
};

/** The llm node's LlmClient on the Anthropic Messages API: one user message (images first, then the text); text blocks joined. */
export const makeAnthropicLlmClient = (makeClient: (options: AnthropicClientOptions) => Anthropic | Promise<Anthropic> = makeAnthropicClient): LlmClient => ({
  async send(request: LlmMessageRequest): Promise<LlmMessageResult> {
    const client = await makeClient({ apiKey: request.apiKey, ...(request.baseURL ? { baseURL: request.baseURL } : {}), timeoutMs: request.timeoutMs });
    const system = systemOf(request);
    let message: Anthropic.Message;
    try {
      message = await client.messages.create(
        {
          model: request.model,
          max_tokens: request.maxTokens,
          messages: [{ role: 'user', content: request.images.length === 0 ? request.prompt : [...request.images, { type: 'text', text: request.prompt }] }],
          ...(system === undefined ? {} : { system }),
          ...(request.temperature === undefined ? {} : { temperature: request.temperature }),
        },
        request.signal ? { signal: request.signal } : undefined,
      );
    } catch (error) {
      return toResult(error, request.model);
    }
    const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    return {
      kind: 'message',
      text,
      model: message.model,
      usage: {
        input_tokens: message.usage.input_tokens,
        output_tokens: message.usage.output_tokens,
        ...(message.usage.cache_creation_input_tokens ? { cache_creation_input_tokens: message.usage.cache_creation_input_tokens } : {}),
        ...(message.usage.cache_read_input_tokens ? { cache_read_input_tokens: message.usage.cache_read_input_tokens } : {}),
      },
      stopReason: message.stop_reason,
    };
  },
});
