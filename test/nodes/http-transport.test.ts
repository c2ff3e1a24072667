// The http node's client (functions/nodes/http-client.ts) against real servers on 127.0.0.1: redirects as fetch
// follows them, encoded bodies, the response size cap, and connections that break or get cancelled.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransientError } from '../../functions/core/errors.ts';
import type { RunContext, RunnerResult } from '../../functions/core/node-type.ts';
import { httpRunner, makeHttpRunner } from '../../functions/nodes/http.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';
import { failureOf, okOutputs, runWithParams } from '../support/run-with-params.ts';

const context: RunContext = { runId: 'run_http_t', nodeId: 'call', seq: 1, cacheKey: 'k' };
const run = (params: Record<string, unknown>, ctx: RunContext = context, runner = httpRunner): Promise<RunnerResult> => runWithParams(runner, params, ctx);
const ok = okOutputs;
const failure = failureOf;

let home: HttpTestServer;
let elsewhere: HttpTestServer;
/** A server whose handler the test sets, for bodies the canned server cannot send (bytes, streams, cut connections). */
let raw: Server;
let rawUrl: string;
let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();

beforeAll(async () => {
  home = await startHttpTestServer();
  elsewhere = await startHttpTestServer();
  raw = createServer((req, res) => handle(req, res));
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  rawUrl = `http://127.0.0.1:${(raw.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await home.close();
  await elsewhere.close();
  raw.closeAllConnections();
  await new Promise((resolve) => raw.close(resolve));
});

describe('http runner: redirects, as fetch follows them', () => {
  it('follows a redirect to the answer, keeping the method and body on 307 and 308', async () => {
    home.route('/moved', { status: 302, headers: { location: '/echo?from=moved' } });
    expect(ok(await run({ url: `${home.url}/moved` })).response).toMatchObject({ method: 'GET', query: { from: 'moved' } });
    for (const status of [307, 308]) {
      home.route('/kept', { status, headers: { location: '/echo' } });
      const echoed = ok(await run({ url: `${home.url}/kept`, method: 'PUT', body: { n: status } })).response;
      expect(echoed, String(status)).toMatchObject({ method: 'PUT', body: { n: status } });
    }
  });

  it('goes on as a GET without the body after a 303, and after a 301 or 302 answering a POST', async () => {
    for (const status of [301, 302, 303]) {
      home.route('/created', { status, headers: { location: '/echo' } });
      const echoed = ok(await run({ url: `${home.url}/created`, method: 'POST', body: { a: 1 } })).response as {
        method: string;
        body: unknown;
        headers: Record<string, string>;
      };
      expect(echoed.method, String(status)).toBe('GET');
      expect(echoed.body, String(status)).toBeNull();
      expect(echoed.headers['content-type'], String(status)).toBeUndefined();
    }
  });

  it('keeps credentials on the same origin and drops them on another', async () => {
    home.route('/here', { status: 302, headers: { location: '/echo' } });
    const same = ok(await run({ url: `${home.url}/here`, auth_token: 'tok' })).response as { headers: Record<string, string> };
    expect(same.headers.authorization).toBe('Bearer tok');
    home.route('/away', { status: 302, headers: { location: `${elsewhere.url}/echo` } });
    const away = ok(await run({ url: `${home.url}/away`, auth_token: 'tok', headers: { 'X-Trace': 't1' } })).response as {
      headers: Record<string, string>;
    };
    expect(away.headers.authorization).toBeUndefined();
    expect(away.headers['x-trace']).toBe('t1');
  });

  it('fails the node, naming the cause, on a redirect loop or a redirect to something else than http(s)', async () => {
    home.route('/loop', { status: 302, headers: { location: '/loop' } });
    const before = home.requests.length;
    const loop = failure(await run({ url: `${home.url}/loop` }));
    expect(loop).toMatchObject({ code: 'REQUEST_FAILED', message: expect.stringContaining('more than 20 redirects'), details: { code: 'REDIRECT_FAILED' } });
    expect(home.requests.length - before).toBe(21);
    home.route('/ftp', { status: 301, headers: { location: 'ftp://127.0.0.1/file' } });
    expect(failure(await run({ url: `${home.url}/ftp` })).message).toContain('only http and https are followed');
  });

  it('answers a redirect without a Location as it is', async () => {
    home.route('/nowhere', { status: 302, body: 'no location' });
    const error = failure(await run({ url: `${home.url}/nowhere` }));
    expect(error).toMatchObject({ code: 'HTTP_STATUS', details: { status_code: 302 } });
  });
});

describe('http runner: URLs', () => {
  it('refuses a user and password in the URL, as fetch did, without repeating them', async () => {
    const before = home.requests.length;
    const error = failure(await run({ url: `${home.url.replace('//', '//ada:s3cret@')}/echo` }));
    expect(error).toMatchObject({ code: 'PARAMS_INVALID', details: { url: `${home.url}/echo` } });
    expect(error.message).toContain('use auth_token, api_key or an Authorization header');
    expect(JSON.stringify(error)).not.toContain('s3cret');
    expect(home.requests.length).toBe(before);
  });
});

describe('http runner: bodies', () => {
  const payload = { items: Array.from({ length: 50 }, (_, i) => ({ i, name: `item ${i}` })) };

  it('asks for gzip, deflate or br and decodes each', async () => {
    const encoders: Record<string, (body: Buffer) => Buffer> = { gzip: gzipSync, br: brotliCompressSync };
    for (const encoding of Object.keys(encoders)) {
      let accepted: string | undefined;
      handle = (req, res) => {
        accepted = req.headers['accept-encoding'];
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': encoding });
        res.end((encoders[encoding] as (body: Buffer) => Buffer)(Buffer.from(JSON.stringify(payload))));
      };
      const outputs = ok(await run({ url: `${rawUrl}/data` }));
      expect(outputs.response, encoding).toEqual(payload);
      expect(outputs.headers, encoding).toMatchObject({ 'content-encoding': encoding });
      expect(accepted).toBe('gzip, deflate, br');
    }
  });

  it('answers HEAD with an empty body, whatever encoding the headers name', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': '120' });
      res.end();
    };
    expect(ok(await run({ url: `${rawUrl}/head`, method: 'HEAD' })).response).toBe('');
  });

  it('joins a repeated response header, and names itself as flowmend', async () => {
    let agent: string | undefined;
    handle = (req, res) => {
      agent = req.headers['user-agent'];
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.end('ok');
    };
    expect(ok(await run({ url: `${rawUrl}/cookies` })).headers).toMatchObject({ 'set-cookie': 'a=1, b=2' });
    expect(agent).toBe('flowmend');
  });

  it('stops reading past the size limit, whether the length is declared or streamed', async () => {
    const small = makeHttpRunner({ maxResponseBytes: 1000 });
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '5000' });
      res.end('x'.repeat(5000));
    };
    expect(failure(await run({ url: `${rawUrl}/declared` }, context, small))).toMatchObject({ code: 'RESPONSE_TOO_LARGE', details: { max_bytes: 1000 } });
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      const timer = setInterval(() => res.write('y'.repeat(400)), 5);
      res.on('close', () => clearInterval(timer));
    };
    expect(failure(await run({ url: `${rawUrl}/streamed` }, context, small)).code).toBe('RESPONSE_TOO_LARGE');
    // The limit counts decoded bytes: 5,000 bytes that gzip into a few dozen are still too many.
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.from('z'.repeat(5000))));
    };
    expect(failure(await run({ url: `${rawUrl}/bomb` }, context, small)).code).toBe('RESPONSE_TOO_LARGE');
  });
});

describe('http runner: broken and cancelled exchanges', () => {
  it('throws TransientError when the server cuts the connection in the middle of the body', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"partial":');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const attempt = run({ url: `${rawUrl}/cut` });
    await expect(attempt).rejects.toBeInstanceOf(TransientError);
    await expect(attempt).rejects.toThrow(/Connection failed \(ECONNRESET\)/);
  });

  it('reports a run cancelled while the body arrives as ABORTED, and one whose body is too slow as timed out', async () => {
    handle = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('first part');
    };
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    expect(failure(await run({ url: `${rawUrl}/hang` }, { ...context, signal: controller.signal })).code).toBe('ABORTED');
    await expect(run({ url: `${rawUrl}/hang`, timeout_s: 0.2 })).rejects.toThrow(/timed out after 0.2 s/);
  });
});
