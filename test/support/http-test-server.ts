import { createServer, type IncomingHttpHeaders, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RecordedHttpRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface CannedReply {
  status?: number;
  /** An object or array is sent as JSON; a string as is. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Wait this long before answering. */
  delayMs?: number;
}

export interface HttpTestServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every request received, in order. */
  readonly requests: RecordedHttpRequest[];
  /** Answers `path` (without query) with `reply` from now on; a function is called per request. */
  route(path: string, reply: CannedReply | ((request: RecordedHttpRequest) => CannedReply)): void;
  close(): Promise<void>;
}

const send = (res: ServerResponse, reply: CannedReply): void => {
  const status = reply.status ?? 200;
  const isText = typeof reply.body === 'string';
  const headers = { 'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json', ...reply.headers };
  const payload = reply.body === undefined ? '' : isText ? (reply.body as string) : JSON.stringify(reply.body);
  res.writeHead(status, headers);
  res.end(payload);
};

/**
 * A real HTTP server on 127.0.0.1 for tests. Built-in routes:
 * `/status/<code>` answers with that status and `{status, message}`;
 * `/slow?ms=<n>` answers `{slow: true}` after n ms;
 * `/echo` answers `{method, path, query, headers, body}` (body parsed when it is JSON);
 * `/json?body=<json>&status=<n>` answers that JSON text; `/text?body=<text>` answers text/plain.
 * Anything else is 404 unless set with `route`.
 */
export const startHttpTestServer = async (): Promise<HttpTestServer> => {
  const requests: RecordedHttpRequest[] = [];
  const routes = new Map<string, CannedReply | ((request: RecordedHttpRequest) => CannedReply)>();
  const timers = new Set<NodeJS.Timeout>();

  const builtin = (recorded: RecordedHttpRequest, url: URL): CannedReply => {
    const status = /^\/status\/(\d{3})$/.exec(url.pathname);
    if (status) {
      const code = Number(status[1]);
      return { status: code, body: { status: code, message: STATUS_CODES[code] ?? 'unknown' } };
    }
    switch (url.pathname) {
      case '/slow':
        return { body: { slow: true }, delayMs: Number(url.searchParams.get('ms') ?? '1000') };
      case '/echo': {
        let body: unknown = recorded.body;
        try {
          body = recorded.body === '' ? null : JSON.parse(recorded.body);
        } catch {
          // text body: echoed as is
        }
        return { body: { method: recorded.method, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: recorded.headers, body } };
      }
      case '/json':
        return {
          status: Number(url.searchParams.get('status') ?? '200'),
          body: url.searchParams.get('body') ?? '{}',
          headers: { 'content-type': 'application/json' },
        };
      case '/text':
        return { body: url.searchParams.get('body') ?? '' };
      default:
        return { status: 404, body: { error: 'no such route', path: url.pathname } };
    }
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedHttpRequest = {
        method: req.method ?? 'GET',
        url: req.url ?? '/',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(recorded);
      const url = new URL(recorded.url, 'http://127.0.0.1');
      const custom = routes.get(url.pathname);
      const reply = custom === undefined ? builtin(recorded, url) : typeof custom === 'function' ? custom(recorded) : custom;
      if (!reply.delayMs) return send(res, reply);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!res.destroyed) send(res, reply);
      }, reply.delayMs);
      timers.add(timer);
      res.on('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    route: (path, reply) => {
      routes.set(path, reply);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};
