import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { ConfigurationError } from '../core/index.ts';
import { envLlmConfig, type LlmConfigProvider } from './anthropic-client.ts';

/** Reads a secret's string value. */
export type SecretReader = (secretId: string) => Promise<string>;

export const secretsManagerReader =
  (client: SecretsManagerClient): SecretReader =>
  async (secretId) => {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: secretId }));
    if (SecretString === undefined) throw new ConfigurationError(`secret ${secretId} has no string value`);
    return SecretString;
  };

/** What a secret may hold: the key, and where to send requests (a gateway or proxy in front of the API). */
export interface AnthropicSecret {
  apiKey: string;
  baseURL?: string;
}

/**
 * The secret's value: the key as the whole string, or a JSON object with `ANTHROPIC_API_KEY` (or `apiKey`)
 * and optionally `ANTHROPIC_BASE_URL` (or `baseURL`).
 */
export function anthropicSecretFromString(secretId: string, value: string): AnthropicSecret {
  const trimmed = value.trim();
  if (!trimmed.startsWith('{')) return { apiKey: trimmed };
  const json = JSON.parse(trimmed) as Record<string, unknown>;
  const key = json.ANTHROPIC_API_KEY ?? json.apiKey;
  if (typeof key !== 'string' || key === '') {
    throw new ConfigurationError(`secret ${secretId} is JSON without an ANTHROPIC_API_KEY or apiKey string`);
  }
  const baseURL = json.ANTHROPIC_BASE_URL ?? json.baseURL;
  if (baseURL !== undefined && (typeof baseURL !== 'string' || !/^https?:\/\//.test(baseURL))) {
    throw new ConfigurationError(`secret ${secretId}: ANTHROPIC_BASE_URL (or baseURL) is not an http(s) URL`);
  }
  return { apiKey: key, ...(baseURL === undefined ? {} : { baseURL }) };
}

/** The key inside a secret (see anthropicSecretFromString). */
export const keyFromSecretString = (secretId: string, value: string): string => anthropicSecretFromString(secretId, value).apiKey;

const cache = new Map<string, Promise<AnthropicSecret>>();
let defaultReader: SecretReader | undefined;
const defaultSecretReader: SecretReader = (secretId) => {
  defaultReader ??= secretsManagerReader(new SecretsManagerClient({}));
  return defaultReader(secretId);
};

/**
 * ANTHROPIC_API_KEY when set; otherwise the Secrets Manager secret named by FLOWMEND_ANTHROPIC_SECRET_ID,
 * fetched once per cold start (a failed fetch is tried again on the next call); otherwise undefined.
 */
export async function resolveAnthropicKey(env: NodeJS.ProcessEnv = process.env, readSecret: SecretReader = defaultSecretReader): Promise<string | undefined> {
  return (await resolveAnthropicSecret(env, readSecret))?.apiKey;
}

/** As resolveAnthropicKey, with the base URL a JSON secret may name. */
export async function resolveAnthropicSecret(
  env: NodeJS.ProcessEnv = process.env,
  readSecret: SecretReader = defaultSecretReader,
): Promise<AnthropicSecret | undefined> {
  const direct = env.ANTHROPIC_API_KEY?.trim();
  if (direct) return { apiKey: direct };
  const secretId = env.FLOWMEND_ANTHROPIC_SECRET_ID?.trim();
  if (!secretId) return undefined;
  let pending = cache.get(secretId);
  if (pending === undefined) {
    pending = readSecret(secretId).then((value) => anthropicSecretFromString(secretId, value));
    cache.set(secretId, pending);
    pending.catch(() => cache.delete(secretId));
  }
  try {
    return await pending;
  } catch (error) {
    if (error instanceof ConfigurationError) throw error;
    throw new ConfigurationError(`the Anthropic key cannot be read from secret ${secretId}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** The LLM configuration of the environment, with the key from Secrets Manager when only the secret is named. */
export const secretAwareLlmConfig =
  (env: NodeJS.ProcessEnv = process.env, readSecret?: SecretReader): LlmConfigProvider =>
  async () => {
    const base = await envLlmConfig(env)();
    const secret = await resolveAnthropicSecret(env, readSecret);
    // The environment's base URL wins over the secret's: it is the deployment's own setting.
    return { ...(secret?.baseURL === undefined ? {} : { baseURL: secret.baseURL }), ...base, ...(secret === undefined ? {} : { apiKey: secret.apiKey }) };
  };

/** Forgets the cached secrets (tests). */
export const clearAnthropicKeyCache = (): void => cache.clear();
