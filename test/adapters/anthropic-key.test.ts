import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clearAnthropicKeyCache, resolveAnthropicKey, secretAwareLlmConfig, secretsManagerReader } from '../../functions/adapters/anthropic-key.ts';
import { ConfigurationError } from '../../functions/core/errors.ts';

const secrets = new Map<string, string>();
const asked: string[] = [];
let server: Server;
let client: SecretsManagerClient;

beforeAll(async () => {
  // Secrets Manager speaks AWS JSON 1.1: POST /, X-Amz-Target: secretsmanager.GetSecretValue.
  server = createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const { SecretId } = JSON.parse(raw) as { SecretId: string };
    asked.push(`${String(req.headers['x-amz-target'])} ${SecretId}`);
    const value = secrets.get(SecretId);
    if (value === undefined) {
      res.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' });
      res.end(JSON.stringify({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' });
    res.end(JSON.stringify({ ARN: `arn:aws:secretsmanager:us-east-1:123456789012:secret:${SecretId}-AbCdEf`, Name: SecretId, SecretString: value }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new SecretsManagerClient({
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    region: 'us-east-1',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  clearAnthropicKeyCache();
  asked.length = 0;
});

describe('resolveAnthropicKey', () => {
  it('prefers ANTHROPIC_API_KEY and then asks for no secret', async () => {
    const key = await resolveAnthropicKey({ ANTHROPIC_API_KEY: 'sk-env', FLOWMEND_ANTHROPIC_SECRET_ID: 'team/key' }, secretsManagerReader(client));
    expect(key).toBe('sk-env');
    expect(asked).toEqual([]);
  });

  it('reads the secret named by FLOWMEND_ANTHROPIC_SECRET_ID once per cold start', async () => {
    secrets.set('team/key', 'sk-from-secret\n');
    const env = { FLOWMEND_ANTHROPIC_SECRET_ID: 'team/key' };
    expect(await resolveAnthropicKey(env, secretsManagerReader(client))).toBe('sk-from-secret');
    expect(await resolveAnthropicKey(env, secretsManagerReader(client))).toBe('sk-from-secret');
    expect(asked).toEqual(['secretsmanager.GetSecretValue team/key']);
  });

  it('takes the key out of a JSON secret', async () => {
    secrets.set('team/json', JSON.stringify({ ANTHROPIC_API_KEY: 'sk-json' }));
    expect(await resolveAnthropicKey({ FLOWMEND_ANTHROPIC_SECRET_ID: 'team/json' }, secretsManagerReader(client))).toBe('sk-json');
  });

  it('is undefined when nothing is configured', async () => {
    expect(await resolveAnthropicKey({}, secretsManagerReader(client))).toBeUndefined();
  });

  it('fails with ConfigurationError naming a missing secret, and asks again on the next call', async () => {
    const env = { FLOWMEND_ANTHROPIC_SECRET_ID: 'team/missing' };
    await expect(resolveAnthropicKey(env, secretsManagerReader(client))).rejects.toThrow(ConfigurationError);
    await expect(resolveAnthropicKey(env, secretsManagerReader(client))).rejects.toThrow(/team\/missing/);
    expect(asked).toHaveLength(2);
  });
});

describe('secretAwareLlmConfig', () => {
  it('keeps the base URL and model of the environment and adds the key from the secret', async () => {
    secrets.set('team/key2', 'sk-2');
    const config = secretAwareLlmConfig(
      { FLOWMEND_ANTHROPIC_SECRET_ID: 'team/key2', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9', FLOWMEND_LLM_MODEL: 'claude-sonnet-4-6' },
      secretsManagerReader(client),
    );
    expect(await config()).toEqual({ apiKey: 'sk-2', baseURL: 'http://127.0.0.1:9', defaultModel: 'claude-sonnet-4-6' });
  });
});
