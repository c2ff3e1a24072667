// The remote CLI's client of the flowmend API against a real server on 127.0.0.1 (node:http, as the http node).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiCallError, ApiClient } from '../../../functions/hosts/cli/api-client.ts';

let handle: (req: IncomingMessage, body: string, res: ServerResponse) => void = (_req, _body, res) => res.end();
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => {
    body += chunk.toString('utf8');
  });
  req.on('end', () => handle(req, body, res));
});
let base: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const thrown = async (call: Promise<unknown>): Promise<ApiCallError> => {
  try {
    await call;
  } catch (error) {
    if (error instanceof ApiCallError) return error;
    throw error;
  }
  throw new Error('expected an ApiCallError');
};

describe('ApiClient', () => {
  it('sends JSON and reads JSON, a gzip-encoded answer too', async () => {
    let seen: { method?: string | undefined; type?: string | undefined; body?: string } = {};
    handle = (req, body, res) => {
      seen = { method: req.method, type: req.headers['content-type'], body };
      res.writeHead(202, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync(Buffer.from(JSON.stringify({ run_id: 'r1', status: 'running' }))));
    };
    const answer = await new ApiClient(base).call('POST', '/runs', { body: { workflow_name: 'x' } });
    expect(answer).toEqual({ run_id: 'r1', status: 'running' });
    expect(seen).toEqual({ method: 'POST', type: 'application/json', body: '{"workflow_name":"x"}' });
  });

  it("turns the API's error answer into its code and message", async () => {
    handle = (_req, _body, res) => {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'RUN_NOT_FOUND', message: 'no run r9' } }));
    };
    const error = await thrown(new ApiClient(base).call('GET', '/runs/r9'));
    expect(error).toMatchObject({ status: 404, code: 'RUN_NOT_FOUND', message: 'no run r9' });
  });

  it('says which API it cannot reach, and why', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const error = await thrown(new ApiClient(url).call('GET', '/runs'));
    expect(error).toMatchObject({ status: 0, code: 'UNREACHABLE' });
    expect(error.message).toBe(`cannot reach the flowmend API at ${url}: connect ECONNREFUSED ${url.slice(7)}`);
  });
});
