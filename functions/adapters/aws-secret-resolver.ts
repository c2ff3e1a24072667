import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import type { SecretResolver, SecretSource } from '../core/index.ts';
import { ConfigurationError, TransientError } from '../core/index.ts';

export interface AwsSecretClients {
  secretsManager?: SecretsManagerClient;
  ssm?: SSMClient;
  /** How long a value read is used again before it is read anew (rotation), ms. */
  ttlMs?: number;
  now?: () => number;
}

/** A warm Lambda runs many nodes: a minute spares Secrets Manager and SSM calls and still follows a rotation soon. */
const DEFAULT_TTL_MS = 60_000;
/** Errors that say the secret is not there or not ours to read: the workflow's problem, not worth a retry. */
const NOT_READABLE = new Set([
  'ResourceNotFoundException',
  'ParameterNotFound',
  'ParameterVersionNotFound',
  'AccessDeniedException',
  'AccessDenied',
  'DecryptionFailure',
  'InvalidKeyId',
  'InvalidRequestException',
  'InvalidParameterException',
  'ValidationException',
  'UnrecognizedClientException',
]);

/**
 * Reads secret inputs for runners: a Secrets Manager secret's `SecretString`, or an SSM parameter's value
 * (SecureString decrypted). Clients are made on first use, so a runner whose params hold no reference
 * never builds one; they follow `AWS_ENDPOINT_URL_SECRETS_MANAGER` / `AWS_ENDPOINT_URL_SSM` like every
 * client here. A secret that is missing or not readable is a `ConfigurationError` naming it; throttling
 * and network failures are a `TransientError` (the state machine retries the node).
 */
export class AwsSecretResolver implements SecretResolver {
  private readonly cache = new Map<string, { value: Promise<string>; at: number }>();
  private readonly ttlMs: number;
  private readonly now: () => number;

  constructor(private readonly clients: AwsSecretClients = {}) {
    this.ttlMs = clients.ttlMs ?? DEFAULT_TTL_MS;
    this.now = clients.now ?? Date.now;
  }

  resolve(source: SecretSource): Promise<string> {
    const key = `${source.service}:${source.name}`;
    const cached = this.cache.get(key);
    if (cached && this.now() - cached.at < this.ttlMs) return cached.value;
    const value = this.read(source);
    this.cache.set(key, { value, at: this.now() });
    // A failed read is not kept: the next node tries again.
    value.catch(() => this.cache.delete(key));
    return value;
  }

  private async read(source: SecretSource): Promise<string> {
    const where = `${source.service}:${source.name}`;
    try {
      if (source.service === 'secretsmanager') {
        this.clients.secretsManager ??= new SecretsManagerClient({});
        const { SecretString } = await this.clients.secretsManager.send(new GetSecretValueCommand({ SecretId: source.name }));
        if (SecretString === undefined) throw new ConfigurationError(`secret input ${where} has no string value (a binary secret cannot be an input)`);
        return SecretString;
      }
      this.clients.ssm ??= new SSMClient({});
      const { Parameter } = await this.clients.ssm.send(new GetParameterCommand({ Name: source.name, WithDecryption: true }));
      if (Parameter?.Value === undefined) throw new ConfigurationError(`secret input ${where} has no value`);
      return Parameter.Value;
    } catch (error) {
      if (error instanceof ConfigurationError) throw error;
      const name = error instanceof Error ? error.name : 'Error';
      const message = error instanceof Error ? error.message : String(error);
      if (NOT_READABLE.has(name)) {
        throw new ConfigurationError(
          `secret input ${where} cannot be read (${name}: ${message}); on AWS the runners may read secrets and parameters under the stack's secret prefix only`,
          { cause: error },
        );
      }
      throw new TransientError(`reading secret input ${where} failed (${name}: ${message})`, { cause: error });
    }
  }
}

/** The resolver of a runner Lambda: one per cold start, so its cache serves the nodes a warm function runs. */
export const awsSecretResolver = new AwsSecretResolver();
