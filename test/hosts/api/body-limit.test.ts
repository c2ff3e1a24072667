import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredBodyLimit } from '../../../functions/hosts/api/body-limit.ts';

const LIMIT = 64;

let server: ReturnType<typeof serve>;
let port: number;
beforeAll(async () => {
  const app = new Hono();
  app.use(
    '*',
    declaredBodyLimit(LIMIT, (c) => c.json({ error: 'too large' }, 413)),
  );
  // Whether @hono/node-server built a web Request (and a ReadableStream over the socket) before the body was read.
  app.post('/', async (c) => {
    const built = !inspect(c.req.raw).includes('nativeRequest: undefined');
    return c.json({ text: await c.req.text(), built });
  });
  await new Promise<void>((done) => {
    server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => done());
  });
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise((done) => server.close(done));
});

/** A POST of `body` with Content-Length, or chunked (no length) when `chunked`. */
const post = (body: string, chunked: boolean): Promise<{ status: number; body: unknown }> =>
  new Promise((done, fail) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/', headers: chunked ? {} : { 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on('end', () => done({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', fail);
    // Two writes: a chunked request sends them as two chunks.
    req.write(body.slice(0, 10));
    req.end(body.slice(10));
  });

describe('declaredBodyLimit', () => {
  it('passes a body under the limit with a Content-Length, read from the socket without a web Request', async () => {
    const body = 'x'.repeat(LIMIT);
    expect(await post(body, false)).toEqual({ status: 200, body: { text: body, built: false } });
  });

  it('refuses a Content-Length over the limit with the error handler', async () => {
    expect(await post('x'.repeat(LIMIT + 1), false)).toEqual({ status: 413, body: { error: 'too large' } });
  });

  it('counts a chunked body (no Content-Length) as it streams: under passes, over is refused', async () => {
    expect(await post('y'.repeat(LIMIT), true)).toMatchObject({ status: 200, body: { text: 'y'.repeat(LIMIT) } });
    expect(await post('y'.repeat(LIMIT + 1), true)).toEqual({ status: 413, body: { error: 'too large' } });
  });
});
