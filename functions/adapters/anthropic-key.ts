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

/** The key inside a secret: the whole string, or `ANTHROPIC_API_KEY` / `apiKey` of a JSON object. */
export function keyFromSecretString(secretId: string, value: string): string {
  const trimmed = value.trim();
  if (!trimmed.startsWith('{')) return trimmed;
  const json = JSON.parse(trimmed) as Record<string, unknown>;
  const key = json.ANTHROPIC_API_KEY ?? json.apiKey;
  if (typeof key !== 'string' || key === '') {
    throw new ConfigurationError(`secret ${secretId} is JSON without an ANTHROPIC_API_KEY or apiKey string`);
  }
  return key;
}

const cache = new Map<string, Promise<string>>();
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
  const direct = env.ANTHROPIC_API_KEY?.trim();
  if (direct) return direct;
  const secretId = env.FLOWMEND_ANTHROPIC_SECRET_ID?.trim();
  if (!secretId) return undefined;
  let pending = cache.get(secretId);
  if (pending === undefined) {
    pending = readSecret(secretId).then((value) => keyFromSecretString(secretId, value));
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
    const apiKey = await resolveAnthropicKey(env, readSecret);
    return { ...base, ...(apiKey === undefined ? {} : { apiKey }) };
  };

/** Forgets the cached secrets (tests). */
export const clearAnthropicKeyCache = (): void => cache.clear();
