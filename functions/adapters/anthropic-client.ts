import type Anthropic from '@anthropic-ai/sdk';
import type { LlmConfigProvider } from '../core/index.ts';

type AnthropicSdk = typeof import('@anthropic-ai/sdk');
let sdk: AnthropicSdk | undefined;

/**
 * The Anthropic SDK, loaded on first use: importing it costs ~600 ms, which every CLI command paid
 * even for workflows with no llm node and no repair.
 */
export const loadAnthropicSdk = async (): Promise<AnthropicSdk> => {
  sdk ??= await import('@anthropic-ai/sdk');
  return sdk;
};

export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';

export interface AnthropicClientOptions {
  apiKey: string;
  /** Default https://api.anthropic.com; tests point it at a fake on 127.0.0.1. */
  baseURL?: string;
  timeoutMs?: number;
}

/**
 * An Anthropic client with everything explicit: the key (so the SDK's profile/credential chain and
 * env lookups never run), the base URL, and no SDK retries (the state machine's Retry owns retries).
 */
export const makeAnthropicClient = async ({ apiKey, baseURL, timeoutMs = 120_000 }: AnthropicClientOptions): Promise<Anthropic> => {
  const { default: Client } = await loadAnthropicSdk();
  return new Client({ apiKey, baseURL: baseURL ?? DEFAULT_ANTHROPIC_BASE_URL, maxRetries: 0, timeout: timeoutMs });
};

export type { LlmConfig, LlmConfigProvider } from '../core/index.ts';

const nonEmpty = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' ? undefined : value);

/**
 * Environment contract: ANTHROPIC_API_KEY (the key), ANTHROPIC_BASE_URL (optional endpoint),
 * FLOWMEND_LLM_MODEL (optional default model). Read on every call so a changed variable takes effect.
 */
export const envLlmConfig =
  (env: NodeJS.ProcessEnv = process.env): LlmConfigProvider =>
  () => {
    const apiKey = nonEmpty(env.ANTHROPIC_API_KEY);
    const baseURL = nonEmpty(env.ANTHROPIC_BASE_URL);
    const defaultModel = nonEmpty(env.FLOWMEND_LLM_MODEL);
    return { ...(apiKey ? { apiKey } : {}), ...(baseURL ? { baseURL } : {}), ...(defaultModel ? { defaultModel } : {}) };
  };
