import { SignatureV4 } from '@smithy/signature-v4';
import { type BlobRef, type BlobStore, blobRefOf, StoreUnavailableError } from '../core/index.ts';
import { checkBlob } from './file-blob-store.ts';
import { NodeSha256 } from './node-sha256.ts';

/** AWS credentials, or a provider of them (an SDK client's `config.credentials`, which caches and refreshes). */
export type S3Credentials =
  | { accessKeyId: string; secretAccessKey: string; sessionToken?: string }
  | (() => Promise<{ accessKeyId: string; secretAccessKey: string; sessionToken?: string }>);

export interface S3BlobStoreOptions {
  bucket: string;
  /** A region, or a provider of it (an SDK client's `config.region`). */
  region: string | (() => Promise<string>);
  credentials: S3Credentials;
  /** Another endpoint (a local S3); requests then go path-style, `<endpoint>/<bucket>/<key>`. */
  endpoint?: string;
}

/**
 * The endpoint the SDK would use for S3 (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL; neither under
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS), as the DynamoDB client reads its own: LocalStack and the emulator
 * serve both on one endpoint.
 */
export function s3EndpointFromEnv(
  env: Readonly<Partial<Record<'AWS_ENDPOINT_URL_S3' | 'AWS_ENDPOINT_URL' | 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', string | undefined>>>,
): string | undefined {
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS?.toLowerCase() === 'true') return undefined;
  return env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
}

/** Path segments escaped once, as S3 signs them (it is the one service whose path is not escaped twice). */
const escapeKey = (key: string): string => key.split('/').map(encodeURIComponent).join('/');
/** RFC 3986, as SigV4 query strings are escaped. */
const escapeQuery = (value: string): string => encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

interface SignableRequest {
  method: string;
  protocol: string;
  hostname: string;
  port?: number;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Blobs in the stack's S3 bucket; upload URLs are presigned PUTs, so runners need no S3 permission.
 * Two requests and two presigned URLs, signed with the SDK's own SigV4 signer (@smithy/signature-v4)
 * and sent with fetch: the S3 client and presigner were a third of the Advance bundle and of its
 * import time on every cold start, for these four calls.
 */
export class S3BlobStore implements BlobStore {
  private readonly signer: SignatureV4;
  private readonly bucket: string;
  private readonly endpoint: string | undefined;
  private readonly regionOf: () => Promise<string>;

  constructor(options: S3BlobStoreOptions) {
    this.bucket = options.bucket;
    this.endpoint = options.endpoint?.replace(/\/+$/, '');
    const region = options.region;
    this.regionOf = typeof region === 'string' ? () => Promise.resolve(region) : region;
    // As the SDK's S3 signer: no second escaping of the path; the payload hash header on signed requests.
    this.signer = new SignatureV4({ service: 's3', region: this.regionOf, credentials: options.credentials, sha256: NodeSha256, uriEscapePath: false });
  }

  private async request(method: 'GET' | 'PUT', key: string): Promise<SignableRequest> {
    const url = new URL(
      this.endpoint
        ? `${this.endpoint}/${this.bucket}/${escapeKey(key)}`
        : `https://${this.bucket}.s3.${await this.regionOf()}.amazonaws.com/${escapeKey(key)}`,
    );
    return {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port ? { port: Number(url.port) } : {}),
      path: url.pathname,
      query: {},
      headers: { host: url.host },
    };
  }

  private static urlOf(request: SignableRequest): string {
    const query = Object.keys(request.query)
      .sort()
      .map((name) => `${escapeQuery(name)}=${escapeQuery(request.query[name] ?? '')}`)
      .join('&');
    return `${request.protocol}//${request.headers.host ?? request.hostname}${request.path}${query ? `?${query}` : ''}`;
  }

  private async send(method: 'GET' | 'PUT', key: string, body?: string): Promise<Response> {
    const unsigned = await this.request(method, key);
    if (body !== undefined) Object.assign(unsigned.headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) });
    const signed = (await this.signer.sign({ ...unsigned, ...(body === undefined ? {} : { body }) })) as SignableRequest;
    const { host: _host, 'content-length': _length, ...headers } = signed.headers;
    return fetch(S3BlobStore.urlOf(signed), { method, headers, ...(body === undefined ? {} : { body }) });
  }

  private async presign(method: 'GET' | 'PUT', key: string, expiresInS: number): Promise<string> {
    const unsigned = await this.request(method, key);
    // A presigned URL signs no payload (S3's rule for query authentication).
    unsigned.headers['X-Amz-Content-Sha256'] = 'UNSIGNED-PAYLOAD';
    const signed = (await this.signer.presign(unsigned, { expiresIn: expiresInS, unsignableHeaders: new Set(['content-type']) })) as SignableRequest;
    return S3BlobStore.urlOf(signed);
  }

  async put(key: string, body: string): Promise<BlobRef> {
    let failure: unknown;
    try {
      const response = await this.send('PUT', key, body);
      if (!response.ok) failure = new Error(`S3 answered HTTP ${response.status}: ${(await response.text()).slice(0, 300)}`);
    } catch (error) {
      failure = error;
    }
    if (failure !== undefined) throw new StoreUnavailableError(`blob ${key} cannot be written to s3://${this.bucket}`, { cause: failure, details: { key } });
    return blobRefOf(key, body);
  }

  async get(ref: BlobRef): Promise<string> {
    let body: string | undefined;
    let failure: unknown;
    let missing = false;
    try {
      const response = await this.send('GET', ref.key);
      const text = await response.text();
      if (response.ok) body = text;
      else {
        missing = response.status === 404 || text.includes('<Code>NoSuchKey</Code>');
        failure = new Error(`S3 answered HTTP ${response.status}: ${text.slice(0, 300)}`);
      }
    } catch (error) {
      failure = error;
    }
    if (body === undefined) {
      const why = missing ? ' (missing: expired by the bucket lifecycle?)' : '';
      throw new StoreUnavailableError(`blob ${ref.key} cannot be read from s3://${this.bucket}${why}`, { cause: failure, details: { key: ref.key } });
    }
    checkBlob(ref, body);
    return body;
  }

  uploadUrl(key: string, expiresInS: number): Promise<string> {
    return this.presign('PUT', key, expiresInS);
  }

  /** A presigned GET: a runner reads its large params without any S3 permission of its own. */
  downloadUrl(key: string, expiresInS: number): Promise<string> {
    return this.presign('GET', key, expiresInS);
  }
}
