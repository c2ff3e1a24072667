import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './read-body.ts';

export interface FakeS3 {
  endpoint: string;
  /** Objects by `bucket/key`. */
  objects: Map<string, string>;
  requests: { method: string; url: string; authorization?: string }[];
  close(): Promise<void>;
}

/** Path-style S3 on 127.0.0.1: PutObject and GetObject (NoSuchKey when absent); signatures are not checked. */
export async function startFakeS3(): Promise<FakeS3> {
  const objects = new Map<string, string>();
  const requests: FakeS3['requests'] = [];
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = decodeURIComponent(url.pathname.slice(1));
    requests.push({ method: req.method ?? '', url: req.url ?? '', ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}) });
    if (req.method === 'PUT') {
      objects.set(path, await readBody(req));
      res.writeHead(200, { etag: '"fake"' }).end();
      return;
    }
    const body = objects.get(path);
    if (req.method === 'GET' && body !== undefined) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    res
      .writeHead(404, { 'content-type': 'application/xml' })
      .end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    objects,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
