import type Anthropic from '@anthropic-ai/sdk';
import type { RepairLlm, RepairLlmReply, RepairLlmRequest } from '../core/index.ts';
import { ConfigurationError, TransientError } from '../core/index.ts';
import { type AnthropicClientOptions, loadAnthropicSdk, makeAnthropicClient } from './anthropic-client.ts';

export const DEFAULT_REPAIR_MODEL = 'claude-haiku-4-5';

/** The repair model: FLOWMEND_REPAIR_MODEL, else a current Haiku. */
export const repairModelFromEnv = (env: NodeJS.ProcessEnv = process.env): string => env.FLOWMEND_REPAIR_MODEL?.trim() || DEFAULT_REPAIR_MODEL;

/** Maps an SDK failure to a core error: throttling, overload, 5xx and network are transient; the rest is configuration. */
const toCoreError = async (error: unknown, model: string): Promise<Error> => {
  const { APIConnectionError, APIError } = await loadAnthropicSdk();
  if (error instanceof APIConnectionError) return new TransientError(`repair LLM call failed: ${error.message}`, { cause: error });
  if (!(error instanceof APIError) || error.status === undefined) return error as Error;
  const status = error.status;
  const apiMessage = error.apiMessage ?? error.message;
  const details = { status_code: status, type: error.type, model };
  if (status === 429 || status === 529 || status >= 500) {
    return new TransientError(`Anthropic API ${status} (${error.type ?? 'error'}): ${apiMessage}`, { cause: error, details });
  }
  const check = status === 401 || status === 403 ? '; check ANTHROPIC_API_KEY' : `; check FLOWMEND_REPAIR_MODEL (${model})`;
  return new ConfigurationError(`Anthropic API rejected the repair request (${status}): ${apiMessage}${check}`, { cause: error, details });
};

/** RepairLlm on the Anthropic Messages API (one user message, text blocks joined; a reply cut off at max_tokens says so first). */
export const makeAnthropicRepairLlm = (
  options: AnthropicClientOptions,
  makeClient: (o: AnthropicClientOptions) => Anthropic | Promise<Anthropic> = makeAnthropicClient,
): RepairLlm => {
  let client: Promise<Anthropic> | undefined;
  return {
    async complete(request: RepairLlmRequest): Promise<RepairLlmReply> {
      let message: Anthropic.Message;
      try {
        client ??= Promise.resolve(makeClient(options));
        message = await (await client).messages.create({
          model: request.model,
          max_tokens: request.maxTokens,
          system: request.system,
          messages: [{ role: 'user', content: request.prompt }],
        });
      } catch (error) {
        throw await toCoreError(error, request.model);
      }
      const text = message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
      const truncated = message.stop_reason === 'max_tokens' ? `(the reply was cut off at max_tokens=${request.maxTokens}) ` : '';
      return { text: `${truncated}${text}`, usage: { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens } };
    },
  };
};
