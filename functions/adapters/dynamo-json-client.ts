import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { SignatureV4 } from '@smithy/signature-v4';
import { DynamoServiceError, dynamoErrorOf, isRetryable, isThrottling } from './dynamo-errors.ts';
import { NodeSha256 } from './node-sha256.ts';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}
/** Credentials, or a provider of them (called before every signature; a provider caches and refreshes). */
export type AwsCredentialSource = AwsCredentials | (() => Promise<AwsCredentials>);

/** The operations the stores and the table setup send. */
export type DynamoOperation =
  | 'GetItem'
  | 'PutItem'
  | 'DeleteItem'
  | 'Query'
  | 'BatchGetItem'
  | 'BatchWriteItem'
  | 'TransactWriteItems'
  | 'CreateTable'
  | 'DescribeTable';

export interface DynamoJsonClientOptions {
  /** A region, or a provider of it. */
  region: string | (() => Promise<string>);
  credentials: AwsCredentialSource;
  /** Another endpoint (LocalStack, dynalite); by default the regional one. */
  endpoint?: string | undefined;
  /** Attempts per request, the first included. The SDK's default for DynamoDB is 4. */
  maxAttempts?: number;
  /** Base of the jittered exponential backoff in ms (the SDK's for DynamoDB: 25; 1000 after throttling). */
  retryBaseMs?: number;
  throttlingRetryBaseMs?: number;
  /** A request without an answer for this long fails as a retryable TimeoutError. */
  timeoutMs?: number;
}

const MAX_RETRY_DELAY_MS = 20_000;
const TARGET_PREFIX = 'DynamoDB_20120810.';

/** The regional endpoint, as the SDK resolves it for the aws, aws-cn and aws-us-gov partitions. */
export const regionalDynamoEndpoint = (region: string): string => `https://dynamodb.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}`;

/** The endpoint the SDK would take from the environment: `AWS_ENDPOINT_URL_DYNAMODB`, then `AWS_ENDPOINT_URL`. */
export function dynamoEndpointFromEnv(
  env: Readonly<Partial<Record<'AWS_ENDPOINT_URL_DYNAMODB' | 'AWS_ENDPOINT_URL' | 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', string | undefined>>>,
): string | undefined {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true') return undefined;
  return env.AWS_ENDPOINT_URL_DYNAMODB || env.AWS_ENDPOINT_URL || undefined;
}

/** Binary values travel base64-encoded in the JSON protocol; `B` and `BS` are the only string-valued keys of those names. */
function encodeBinary(this: unknown, key: string, value: unknown): unknown {
  const original = (this as Record<string, unknown>)[key];
  return original instanceof Uint8Array ? Buffer.from(original.buffer, original.byteOffset, original.byteLength).toString('base64') : value;
}
const decodeBinary = (key: string, value: unknown): unknown => {
  if (key === 'B' && typeof value === 'string') return Buffer.from(value, 'base64');
  if (key === 'BS' && Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.map((v: string) => Buffer.from(v, 'base64'));
  return value;
};

interface Answer {
  status: number;
  body: string;
  errorType: string | undefined;
}

/**
 * DynamoDB's JSON protocol over node:http(s): each request a signed POST of one operation, retried as
 * the SDK's standard mode retries (throttling, 5xx, socket errors; jittered exponential backoff).
 * Speaks wire-format attribute values; `DynamoDocument` (dynamo-document.ts) marshals plain values.
 * It replaces @aws-sdk/client-dynamodb on the Lambda path: that client and @smithy/core were 200 KB
 * of the Advance bundle and half its import time on every cold start (README, Cold starts).
 */
export class DynamoJsonClient {
  private readonly signer: SignatureV4;
  private readonly endpointOf: () => Promise<URL>;
  private readonly agent: HttpAgent;
  private readonly secure: boolean;
  private readonly maxAttempts: number;
  private readonly retryBaseMs: number;
  private readonly throttlingRetryBaseMs: number;
  private readonly timeoutMs: number;

  constructor(options: DynamoJsonClientOptions) {
    const region = options.region;
    const regionOf = typeof region === 'string' ? () => Promise.resolve(region) : region;
    const fixed = options.endpoint === undefined ? undefined : new URL(options.endpoint);
    this.endpointOf = fixed ? () => Promise.resolve(fixed) : async () => new URL(regionalDynamoEndpoint(await regionOf()));
    this.secure = fixed === undefined || fixed.protocol === 'https:';
    // Keep-alive as the SDK's handler: a cold start pays one TLS handshake, not one per request.
    this.agent = this.secure ? new HttpsAgent({ keepAlive: true, maxSockets: 50 }) : new HttpAgent({ keepAlive: true, maxSockets: 50 });
    this.signer = new SignatureV4({ service: 'dynamodb', region: regionOf, credentials: options.credentials, sha256: NodeSha256 });
    this.maxAttempts = Math.max(1, options.maxAttempts ?? 4);
    this.retryBaseMs = options.retryBaseMs ?? 25;
    this.throttlingRetryBaseMs = options.throttlingRetryBaseMs ?? 1000;
    this.timeoutMs = options.timeoutMs ?? 30_000;
  }

  /** Sends one operation; resolves with DynamoDB's answer, or rejects with a DynamoServiceError or the last socket error. */
  async send<T = Record<string, unknown>>(operation: DynamoOperation, input: object): Promise<T> {
    const body = JSON.stringify(input, encodeBinary);
    for (let attempt = 1; ; attempt++) {
      let failure: unknown;
      try {
        const answer = await this.post(operation, body);
        // A reviver doubles JSON.parse's time (700 KB of items: 5 -> 9 ms): only answers that hold a binary value get one.
        if (answer.status >= 200 && answer.status < 300) return JSON.parse(answer.body, answer.body.includes('"B') ? decodeBinary : undefined) as T;
        failure = dynamoErrorOf(answer.status, answer.body, answer.errorType);
      } catch (error) {
        failure = error;
      }
      if (attempt >= this.maxAttempts || !isRetryable(failure)) throw failure;
      // Full jitter, as the SDK: a random delay up to base * 2^retry, capped.
      const base = isThrottling(failure) ? this.throttlingRetryBaseMs : this.retryBaseMs;
      const delay = Math.floor(Math.random() * Math.min(base * 2 ** (attempt - 1), MAX_RETRY_DELAY_MS));
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }

  /** Closes the kept-alive sockets (a CLI exits without waiting for them). */
  destroy(): void {
    this.agent.destroy();
  }

  private async post(operation: DynamoOperation, body: string): Promise<Answer> {
    const url = await this.endpointOf();
    // Signed afresh per attempt: the date is part of the signature.
    const signed = await this.signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: {
        host: url.host,
        'content-type': 'application/x-amz-json-1.0',
        'content-length': String(Buffer.byteLength(body)),
        'x-amz-target': `${TARGET_PREFIX}${operation}`,
      },
      body,
    });
    // Exactly the signed headers go out: node:http adds only `Connection`, which SigV4 never signs.
    const send = this.secure ? httpsRequest : httpRequest;
    return new Promise<Answer>((resolve, reject) => {
      const request = send(
        {
          protocol: url.protocol,
          hostname: url.hostname,
          port: url.port || undefined,
          path: url.pathname,
          method: 'POST',
          headers: signed.headers,
          agent: this.agent,
        },
        (response: IncomingMessage) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const errorType = response.headers['x-amzn-errortype'];
            resolve({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks).toString('utf8'),
              errorType: typeof errorType === 'string' ? errorType : undefined,
            });
          });
        },
      );
      request.setTimeout(this.timeoutMs, () => {
        request.destroy(new DynamoServiceError('TimeoutError', `no answer from DynamoDB within ${this.timeoutMs} ms`, { statusCode: 0 }));
      });
      request.on('error', reject);
      request.end(body);
    });
  }
}
