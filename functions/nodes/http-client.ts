import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';

/**
 * The http node's client, also the remote CLI's and the viewer's ping, on node:http and node:https.
 * `fetch` would do the same work, but Node 20 loads its undici (with an HTTP/2 client and web streams) at
 * the first call: 61-76 ms of a fresh process here, against 15-20 ms for node:http, and a CLI run paid it
 * once per http workflow. What fetch did for the node is kept: redirects are followed as fetch follows
 * them (at most 20; 303, and 301/302 after a POST, go on as a GET without the body; credentials stay on
 * the same origin), a gzip, deflate or br body is decoded, and the signal aborts the exchange wherever
 * it is.
 */

export interface HttpExchange {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly signal?: AbortSignal;
  /** Bytes of the (decoded) body kept before the exchange is abandoned with ResponseTooLargeError. */
  readonly maxBytes: number;
}

export interface HttpReply {
  readonly status: number;
  readonly statusText: string;
  /** Lower-cased names; a repeated header's values joined with ", ". */
  readonly headers: Record<string, string>;
  readonly text: string;
}

export class ResponseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`response body is over ${limit} bytes`);
  }
}

/** A redirect that cannot be followed; `code` as Node's own errors carry one. */
export class RedirectError extends Error {
  readonly code = 'REDIRECT_FAILED';
}

const MAX_REDIRECTS = 20;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers fetch drops when a redirect changes a request into a GET without a body. */
const BODY_HEADERS = ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location'];
/** Headers fetch drops when a redirect leaves the origin. */
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];

/** Sends one request and answers its final response, after redirects; rejects with Node's error on a network failure. */
export const exchange = async (url: URL, request: HttpExchange): Promise<HttpReply> => {
  let target = url;
  let method = request.method;
  let body = request.body;
  const headers: Record<string, string> = { accept: '*/*', 'accept-encoding': 'gzip, deflate, br', 'user-agent': 'flowmend' };
  for (const [name, value] of Object.entries(request.headers)) headers[name.toLowerCase()] = value;
  for (let redirects = 0; ; redirects += 1) {
    const response = await send(target, method, headers, body, request.signal);
    const location = response.headers.location;
    if (!REDIRECT_STATUSES.has(response.statusCode ?? 0) || location === undefined) {
      // A HEAD answer, a 204 and a 304 have no body to decode, whatever their headers say.
      const bodyless = method === 'HEAD' || response.statusCode === 204 || response.statusCode === 304 || response.headers['content-length'] === '0';
      return read(response, request, bodyless ? undefined : await decoderFor(response.headers['content-encoding']));
    }
    response.resume();
    if (redirects === MAX_REDIRECTS) throw new RedirectError(`more than ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, target);
    } catch {
      throw new RedirectError(`redirected to "${location}", which is not a URL`);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw new RedirectError(`redirected to "${next.href}": only http and https are followed`);
    const status = response.statusCode;
    if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
      for (const name of BODY_HEADERS) delete headers[name];
    }
    if (next.origin !== target.origin) for (const name of CREDENTIAL_HEADERS) delete headers[name];
    target = next;
  }
};

// node:http, node:https (with TLS) and node:zlib load at the first request that needs them: every run and
// resume loads the runners, and most workflows make no request.
const send = async (
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal | undefined,
): Promise<IncomingMessage> => {
  const { request: open } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const sized = body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    const request = open(url, { method, headers: sized, ...(signal ? { signal } : {}) }, resolve);
    request.on('error', reject);
    request.end(body);
  });
};

const decoderFor = async (encoding: string | undefined): Promise<Transform | undefined> => {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
    case 'deflate':
      // Gzip or zlib, told apart by their headers.
      return (await import('node:zlib')).createUnzip();
    case 'br':
      return (await import('node:zlib')).createBrotliDecompress();
    default:
      return undefined;
  }
};

/** Reads the body, decoded, as text; stops (dropping the connection) past `maxBytes`, or when the signal aborts. */
const read = (response: IncomingMessage, { maxBytes, signal }: HttpExchange, decoder: Transform | undefined): Promise<HttpReply> =>
  new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    const stop = (error: Error): void => {
      signal?.removeEventListener('abort', aborted);
      response.destroy();
      decoder?.destroy();
      reject(error);
    };
    const aborted = (): void => stop(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    const declared = Number(headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      stop(new ResponseTooLargeError(maxBytes));
      return;
    }
    if (signal?.aborted) {
      aborted();
      return;
    }
    signal?.addEventListener('abort', aborted, { once: true });
    const chunks: Buffer[] = [];
    let size = 0;
    const body = decoder ? response.pipe(decoder) : response;
    // A connection that closes before the body's end (the server died, a proxy cut it) errs with ECONNRESET.
    response.on('error', stop);
    body.on('error', stop);
    body.on('data', (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > maxBytes) stop(new ResponseTooLargeError(maxBytes));
      else chunks.push(chunk);
    });
    body.on('end', () => {
      signal?.removeEventListener('abort', aborted);
      resolve({
        status: response.statusCode ?? 0,
        statusText: response.statusMessage ?? '',
        headers,
        text: Buffer.concat(chunks, size).toString('utf8'),
      });
    });
  });
