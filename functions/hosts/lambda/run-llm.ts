import { secretAwareLlmConfig } from '../../adapters/anthropic-key.ts';
import { makeAnthropicLlmClient } from '../../adapters/anthropic-llm-client.ts';
import { makeLlmRunner } from '../../nodes/llm.ts';
import { bundledSecretResolver } from './bundled-secret-resolver.ts';
import { makeRunNodeHandler } from './run-node.ts';

/**
 * Env contract: ANTHROPIC_API_KEY, or on AWS the Secrets Manager secret named by
 * FLOWMEND_ANTHROPIC_SECRET_ID (read once per cold start); ANTHROPIC_BASE_URL and FLOWMEND_LLM_MODEL optional.
 */
export const handler = makeRunNodeHandler(makeLlmRunner({ config: secretAwareLlmConfig(), client: makeAnthropicLlmClient() }), {
  secrets: bundledSecretResolver,
});
