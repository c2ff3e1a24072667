import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyOutcome } from '../../functions/core/classify.ts';
import { TransientError } from '../../functions/core/errors.ts';
import type { RunContext, RunnerResult } from '../../functions/core/node-type.ts';
import { httpRunner, idempotencyKey } from '../../functions/nodes/http.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';
import { failureOf, okOutputs, runWithParams } from '../support/run-with-params.ts';

let server: HttpTestServer;
const context: RunContext = { runId: 'run_http_1', nodeId: 'call', seq: 1, cacheKey: 'c0ffee' };

beforeAll(async () => {
  server = await startHttpTestServer();
});
afterAll(() => server.close());

const run = (params: Record<string, unknown>, ctx: RunContext = context): Promise<RunnerResult> => runWithParams(httpRunner, params, ctx);
const ok = okOutputs;
const failure = failureOf;
const lastRequest = () => {
  const request = server.requests.at(-1);
  if (!request) throw new Error('no request recorded');
  return request;
};
const jsonUrl = (body: unknown, status = 200) => `${server.url}/json?status=${status}&body=${encodeURIComponent(JSON.stringify(body))}`;

describe('http runner: requests', () => {
  it('GETs JSON and returns status, lower-cased headers and the parsed body', async () => {
    server.route('/user', { body: { login: 'ada', id: 7 }, headers: { 'X-Request-Id': 'r-1' } });
    const outputs = ok(await run({ url: `${server.url}/user` }));
    expect(outputs.status_code).toBe(200);
    expect(outputs.response).toEqual({ login: 'ada', id: 7 });
    expect(outputs.headers).toMatchObject({ 'x-request-id': 'r-1', 'content-type': 'application/json' });
    expect(outputs.extracted).toEqual({});
    expect(lastRequest().method).toBe('GET');
  });

  it('keeps a non-JSON body as text, and JSON with a bad content type as text too', async () => {
    expect(ok(await run({ url: `${server.url}/text?body=hello` })).response).toBe('hello');
    expect(ok(await run({ url: `${server.url}/text?body=${encodeURIComponent('{"a":1}')}` })).response).toBe('{"a":1}');
  });

  it('appends query values (arrays repeat the name) and accepts pflow\'s "params" spelling', async () => {
    await run({ url: `${server.url}/echo?keep=1`, query: { q: 'a b', n: 3, tag: ['x', 'y'], skip: null } });
    expect(lastRequest().url).toBe('/echo?keep=1&q=a+b&n=3&tag=x&tag=y');
    await run({ url: `${server.url}/echo`, params: { page: 2 } });
    expect(lastRequest().url).toBe('/echo?page=2');
  });

  it('sends an object body as JSON with POST by default, and a string body as text', async () => {
    const outputs = ok(await run({ url: `${server.url}/echo`, body: { text: 'hi', n: 1 } }));
    expect(outputs.response).toMatchObject({ method: 'POST', body: { text: 'hi', n: 1 } });
    expect(lastRequest().headers['content-type']).toBe('application/json');
    await run({ url: `${server.url}/echo`, method: 'put', body: 'plain words' });
    expect(lastRequest()).toMatchObject({ method: 'PUT', body: 'plain words' });
    expect(lastRequest().headers['content-type']).toMatch(/^text\/plain/);
  });

  it("sends the given headers and pflow's auth shortcuts", async () => {
    await run({ url: `${server.url}/echo`, headers: { 'X-Trace': 'abc', 'X-Num': 5 }, auth_token: 'tok' });
    expect(lastRequest().headers).toMatchObject({ 'x-trace': 'abc', 'x-num': '5', authorization: 'Bearer tok' });
    await run({ url: `${server.url}/echo`, api_key: 'k1', api_key_header: 'X-Key' });
    expect(lastRequest().headers['x-key']).toBe('k1');
  });

  it('rejects bad params as repairable data, before sending anything', async () => {
    const before = server.requests.length;
    expect(failure(await run({ url: 'not a url' }))).toMatchObject({ code: 'PARAMS_INVALID', message: expect.stringContaining('not a url') });
    expect(failure(await run({ url: 'ftp://x/y' })).code).toBe('PARAMS_INVALID');
    expect(failure(await run({ url: `${server.url}/echo`, method: 'GET', body: { a: 1 } })).message).toContain('cannot have a body');
    expect(failure(await run({ url: `${server.url}/echo`, method: 'FETCH' })).message).toContain('Unsupported method');
    expect(failure(await run({ url: `${server.url}/echo`, bogus: 1 })).message).toContain('bogus');
    expect(failure(await run({ url: `${server.url}/echo`, extract: { a: 'a.b' } })).message).toContain('$.a.b[0].c');
    expect(server.requests.length).toBe(before);
  });

  it('reports a cancelled run without sending', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(failure(await run({ url: `${server.url}/echo` }, { ...context, signal: controller.signal })).code).toBe('ABORTED');
  });
});

describe('http runner: Idempotency-Key', () => {
  const keyOf = () => lastRequest().headers['idempotency-key'];

  it('is sent on POST, PUT, PATCH and DELETE and not on GET or HEAD', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      await run({ url: `${server.url}/echo`, method });
      expect(keyOf(), method).toBe(idempotencyKey(context));
    }
    for (const method of ['GET', 'HEAD']) {
      await run({ url: `${server.url}/echo`, method });
      expect(keyOf(), method).toBeUndefined();
    }
  });

  it('is a stable hex digest of run, node and cache key', async () => {
    await run({ url: `${server.url}/echo`, body: { a: 1 } });
    const first = keyOf();
    await run({ url: `${server.url}/echo`, body: { a: 1 } });
    expect(keyOf()).toBe(first);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    await run({ url: `${server.url}/echo`, body: { a: 1 } }, { ...context, cacheKey: 'other' });
    expect(keyOf()).not.toBe(first);
    await run({ url: `${server.url}/echo`, body: { a: 1 } }, { ...context, runId: 'run_http_2' });
    expect(keyOf()).not.toBe(first);
  });

  it('keeps a key the user set', async () => {
    await run({ url: `${server.url}/echo`, method: 'POST', headers: { 'Idempotency-Key': 'mine' } });
    expect(keyOf()).toBe('mine');
  });

  it('declares side effects for mutating methods and for a method given by a template', () => {
    expect(httpRunner.sideEffects({ url: 'u' })).toBe(false);
    expect(httpRunner.sideEffects({ url: 'u', method: 'get' })).toBe(false);
    expect(httpRunner.sideEffects({ url: 'u', body: { a: 1 } })).toBe(true);
    expect(httpRunner.sideEffects({ url: 'u', method: 'delete' })).toBe(true);
    expect(httpRunner.sideEffects({ url: 'u', method: '${inputs.method}' })).toBe(true);
  });
});

describe('http runner: status classes', () => {
  const classify = (result: RunnerResult) => classifyOutcome({ nodeId: 'call', nodeType: 'http', capabilities: httpRunner.capabilities ?? {}, result });

  it.each([401, 403, 404, 410, 429])('returns HTTP %i as data that classifies as a warning', async (status) => {
    const result = await run({ url: `${server.url}/status/${status}` });
    const error = failure(result);
    expect(error.code).toBe('HTTP_STATUS');
    expect(error.details).toMatchObject({ status_code: status });
    expect(classify(result)).toMatchObject({ kind: 'warning', error: { category: 'non_repairable', fixable: false } });
  });

  it.each([400, 405, 409, 413, 415, 422, 418])('returns HTTP %i as data that classifies as repairable', async (status) => {
    const result = await run({ url: `${server.url}/status/${status}` });
    expect(failure(result).code).toBe('HTTP_STATUS');
    expect(classify(result)).toMatchObject({ kind: 'error', error: { category: 'execution_failure', fixable: true } });
  });

  it('names the status, its reason and a short body in the message, and keeps the outputs', async () => {
    const result = await run({ url: `${server.url}/status/404` });
    expect(failure(result).message).toBe('HTTP 404 Not Found: {"status":404,"message":"Not Found"}');
    expect(result.outputs).toMatchObject({ status_code: 404, response: { status: 404 } });
  });

  it.each([500, 502, 503, 504, 408])('throws TransientError on HTTP %i so the state machine retries', async (status) => {
    const attempt = run({ url: `${server.url}/status/${status}` });
    await expect(attempt).rejects.toBeInstanceOf(TransientError);
    await expect(attempt).rejects.toThrow(`HTTP ${status}`);
  });

  it('throws TransientError when the response is slower than timeout_s', async () => {
    await expect(run({ url: `${server.url}/slow?ms=5000`, timeout_s: 0.2 })).rejects.toThrow(/timed out after 0.2 s/);
    await expect(run({ url: `${server.url}/slow?ms=5000`, timeout: 0.2 })).rejects.toBeInstanceOf(TransientError);
  });

  it('answers a slow response within timeout_s normally', async () => {
    expect(ok(await run({ url: `${server.url}/slow?ms=50`, timeout_s: 10 })).response).toEqual({ slow: true });
  });

  it('throws TransientError when the connection is refused', async () => {
    const closed = await startHttpTestServer();
    await closed.close();
    await expect(run({ url: `${closed.url}/x` })).rejects.toThrow(/ECONNREFUSED/);
  });

  it("follows the workflow's status rules over the defaults", async () => {
    const rules = { warning_status_codes: [202], repairable_status_codes: [503], transient_status_codes: [409] };
    // The rules reach the runner through its run context (the engine puts them there for http nodes).
    const ruled = { ...context, classification: rules };
    const accepted = await run({ url: `${server.url}/status/202` }, ruled);
    expect(classifyOutcome({ nodeId: 'call', nodeType: 'http', result: accepted, rules, capabilities: httpRunner.capabilities ?? {} }).kind).toBe('warning');
    const unavailable = await run({ url: `${server.url}/status/503` }, ruled);
    expect(classifyOutcome({ nodeId: 'call', nodeType: 'http', result: unavailable, rules, capabilities: httpRunner.capabilities ?? {} }).kind).toBe('error');
    await expect(run({ url: `${server.url}/status/409` }, ruled)).rejects.toBeInstanceOf(TransientError);
  });
});

describe('http runner: business errors in 2xx bodies', () => {
  it.each([
    [{ ok: false, error: 'channel_not_found' }, 'warning', 'API error: channel_not_found'],
    [{ success: false, error_code: 'UNAUTHORIZED', error: 'Invalid token' }, 'warning', 'API error (UNAUTHORIZED): Invalid token'],
    [{ errors: [{ message: 'Repository not found' }] }, 'warning', 'API error: Repository not found'],
    [{ ok: false, error: 'invalid_parameter' }, 'error', 'API error: invalid_parameter'],
    [{ ok: true, error: null, data: [1] }, 'success', undefined],
  ])('classifies %j from a real response', async (body, kind, message) => {
    const result = await run({ url: jsonUrl(body) });
    expect(result.kind).toBe('ok');
    const outcome = classifyOutcome({ nodeId: 'call', nodeType: 'http', capabilities: httpRunner.capabilities ?? {}, result });
    expect(outcome.kind).toBe(kind);
    if (outcome.kind === 'warning' || outcome.kind === 'error') expect(outcome.error.message).toBe(message);
  });
});

describe('http runner: extract', () => {
  const body = { data: { items: [{ id: 'a1', tags: ['x'] }], 'odd key': 5, none: null, count: 1 } };

  it('extracts nested keys, array items, bracketed keys and null values', async () => {
    const outputs = ok(
      await run({
        url: jsonUrl(body),
        extract: { first: '$.data.items[0].id', tag: '$.data.items[0].tags[0]', odd: "$.data['odd key']", none: '$.data.none', all: '$' },
      }),
    );
    expect(outputs.extracted).toEqual({ first: 'a1', tag: 'x', odd: 5, none: null, all: body });
  });

  it('reports a missing key with the path, the keys available where it broke and a sample', async () => {
    const error = failure(await run({ url: jsonUrl(body), extract: { first: '$.data.itemz[0].id' } }));
    expect(error.code).toBe('EXTRACT_MISSING');
    expect(error.message).toContain('$.data.itemz[0].id');
    expect(error.message).toContain('$.data has no "itemz"');
    expect(error.message).toContain('available there: items, odd key, none, count');
    expect(error.message).toContain('"id":"a1"');
    expect(error.details).toMatchObject({ path: '$.data.itemz[0].id', reached: '$.data', available: ['items', 'odd key', 'none', 'count'] });
  });

  it('reports an index past the end of an array with its range', async () => {
    const error = failure(await run({ url: jsonUrl(body), extract: { second: '$.data.items[1].id' } }));
    expect(error.message).toContain('$.data.items has no [1]; available there: [0]..[0]');
  });

  it('classifies a miss as repairable and keeps the response in the outputs', async () => {
    const result = await run({ url: jsonUrl(body), extract: { x: '$.nope' } });
    expect(result.outputs).toMatchObject({ status_code: 200, response: body });
    expect(classifyOutcome({ nodeId: 'call', nodeType: 'http', capabilities: httpRunner.capabilities ?? {}, result })).toMatchObject({
      kind: 'error',
      error: { code: 'EXTRACT_MISSING', fixable: true },
    });
  });

  it('bounds the response sample of a large body', async () => {
    server.route('/big', { body: { rows: Array.from({ length: 2000 }, (_, i) => ({ i })) } });
    const error = failure(await run({ url: `${server.url}/big`, extract: { x: '$.rows[0].missing' } }));
    expect(error.message).toContain('$.rows[0] has no "missing"; available there: i');
    expect(error.message.length).toBeLessThan(800);
  });
});
