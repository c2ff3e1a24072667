import { NodeSha256 } from '../../adapters/node-sha256.ts';
import * as z from '../../core/zod.ts';
import { exchange, type HttpReply, ResponseTooLargeError } from '../../nodes/http-client.ts';

/** An API answer other than 2xx, with the API's own error code and message when it sent one. */
export class ApiCallError extends Error {
  override readonly name = 'ApiCallError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const ErrorBodySchema = z.object({ error: z.object({ code: z.string(), message: z.string(), details: z._default(z.record(z.string(), z.unknown()), {}) }) });

/**
 * The region to sign for when the URL is API Gateway's, whose IAM authorizer wants SigV4: an
 * `https://<id>.execute-api.<region>.amazonaws.com/...` host, or a stage URL of an emulated API Gateway
 * (`.../restapis/<id>/<stage>/_user_request_/...`, the AWS emulator's and LocalStack's form), whose
 * region is the environment's (AWS_REGION, AWS_DEFAULT_REGION, else us-east-1).
 */
export const executeApiRegion = (url: URL, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  const region = /\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$/.exec(url.hostname)?.[1];
  if (region !== undefined) return region;
  if (!/\/restapis\/[^/]+\/[^/]+\/_user_request_(\/|$)/.test(url.pathname)) return undefined;
  return env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1';
};

export type RequestSigner = (request: { method: string; url: URL; headers: Record<string, string>; body?: string }) => Promise<Record<string, string>>;

export interface SigningCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** SigV4 for execute-api with the given credentials, else the default AWS chain (env, profile, SSO, instance role). */
export const makeSigV4Signer = async (region: string, credentials?: SigningCredentials): Promise<RequestSigner> => {
  const [{ SignatureV4 }, { fromNodeProviderChain }] = await Promise.all([import('@smithy/signature-v4'), import('@aws-sdk/credential-providers')]);
  const signer = new SignatureV4({ service: 'execute-api', region, credentials: credentials ?? fromNodeProviderChain(), sha256: NodeSha256 });
  return async ({ method, url, headers, body }) => {
    const signed = await signer.sign({
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { ...headers, host: url.host },
      ...(body === undefined ? {} : { body }),
    });
    return signed.headers as Record<string, string>;
  };
};

/** The signer an API URL needs: SigV4 for API Gateway's execute-api, none for `flowmend serve`. */
export const signerForApi = (baseUrl: string): Promise<RequestSigner | undefined> => {
  const region = executeApiRegion(new URL(baseUrl));
  return region === undefined ? Promise.resolve(undefined) : makeSigV4Signer(region);
};

/** The largest answer read (a long `runs --all` or `logs`); API Gateway's own limit is 10 MB. */
const MAX_ANSWER_BYTES = 64 * 1024 * 1024;

/** A client of the flowmend API: JSON in and out, API errors as ApiCallError, signed when the URL is API Gateway's. */
export class ApiClient {
  private signer: Promise<RequestSigner | undefined> | undefined;

  /**
   * `token`: a `serve --allow-remote`'s (FLOWMEND_API_TOKEN), sent as a Bearer token; AWS APIs are signed instead.
   * `signer`: how requests are signed, instead of what the URL implies (signerForApi).
   */
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
    signer?: RequestSigner,
  ) {
    if (signer !== undefined) this.signer = Promise.resolve(signer);
  }

  private async sign(): Promise<RequestSigner | undefined> {
    this.signer ??= signerForApi(this.baseUrl);
    return this.signer;
  }

  async call<T>(method: string, path: string, options: { body?: unknown; headers?: Record<string, string> } = {}): Promise<T> {
    const url = new URL(`${this.baseUrl}${path}`);
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    let headers: Record<string, string> = {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(this.token === undefined ? {} : { authorization: `Bearer ${this.token}` }),
      ...options.headers,
    };
    const signer = await this.sign();
    if (signer) headers = await signer({ method, url, headers, ...(body === undefined ? {} : { body }) });
    // node:http, as the http node sends: fetch's undici would add its first load to every remote command.
    let response: HttpReply;
    try {
      response = await exchange(url, { method, headers, maxBytes: MAX_ANSWER_BYTES, ...(body === undefined ? {} : { body }) });
    } catch (error) {
      if (error instanceof ResponseTooLargeError) {
        throw new ApiCallError(0, 'BAD_RESPONSE', `the API at ${this.baseUrl} answered ${method} ${path} with more than ${error.limit} bytes`);
      }
      throw new ApiCallError(0, 'UNREACHABLE', `cannot reach the flowmend API at ${this.baseUrl}: ${(error as Error).message}`);
    }
    const { text } = response;
    if (response.status === 204) return undefined as T;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new ApiCallError(response.status, 'BAD_RESPONSE', `the API at ${this.baseUrl} answered ${method} ${path} with ${response.status} and no JSON`);
    }
    if (response.status < 200 || response.status > 299) {
      const error = ErrorBodySchema.safeParse(json);
      if (error.success) throw new ApiCallError(response.status, error.data.error.code, error.data.error.message, error.data.error.details);
      // API Gateway's own answers (403 from the IAM authorizer) are `{ "message": ... }`.
      const message = (json as { message?: unknown } | null)?.message;
      throw new ApiCallError(response.status, `HTTP_${response.status}`, typeof message === 'string' ? message : `HTTP ${response.status}`);
    }
    return json as T;
  }
}
