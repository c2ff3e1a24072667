import { llmRunner } from '../nodes/llm.ts';
import { makeRunNodeHandler } from './run-node.ts';

/**
 * Env contract: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL (optional), FLOWMEND_LLM_MODEL (optional),
 * read on every call. On AWS the key lives in the Secrets Manager secret named by
 * FLOWMEND_ANTHROPIC_SECRET_ID: a handler built with `makeLlmRunner({ config })` and a provider that
 * fetches that secret once per cold start (when ANTHROPIC_API_KEY is unset) plugs in here.
 */
export const handler = makeRunNodeHandler(llmRunner);
