// W3C Trace Context through `flowmend serve`: a traceparent sent with POST /runs puts the run in the
// caller's trace, and the run's http node sends the trace on to the service it calls (an HTTP server on
// 127.0.0.1 records the headers). The spans reach an OTLP/HTTP receiver; GET /metrics answers Prometheus text.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from '../support/cli-process.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../support/serve-process.ts';

const CALLER = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331' };

let receiver: OtlpReceiver;
let service: HttpTestServer;
let serve: ServeProcess;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  service = await startHttpTestServer();
  serve = await startServe(join(makeTempDir('telemetry-serve'), 'state'), 30_000, [], {
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
    OTEL_SERVICE_NAME: 'flowmend-under-test',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  });
});

afterAll(async () => {
  await serve.stop();
  await receiver.close();
  await service.close();
});

const workflow = (name: string) => ({
  name,
  nodes: [
    { id: 'call', type: 'http', params: { url: `${service.url}/echo`, method: 'POST', body: { hello: 'world' } } },
    { id: 'after', type: 'transform', params: { expression: '$.status_code', input: '${call}' } },
  ],
  edges: [{ from: 'call', to: 'after' }],
});

/** Waits until the receiver has a span named `name` (serve exports in batches, every few seconds). */
const spanNamed = async (name: string, traceId: string) => {
  for (let i = 0; i < 200; i += 1) {
    const span = receiver.spans.find((s) => s.name === name && s.traceId === traceId);
    if (span) return span;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no span '${name}' in trace ${traceId}; got ${receiver.spans.map((s) => `${s.name}@${s.traceId}`).join(', ')}`);
};

describe('traceparent through serve', () => {
  it("puts the run in the caller's trace and sends the trace on with the http node's request", async () => {
    const started = await request<{ run_id: string }>(serve.url, 'POST', '/runs', {
      body: { workflow: workflow('traced') },
      headers: { traceparent: `00-${CALLER.traceId}-${CALLER.spanId}-01` },
    });
    expect(started.status).toBe(202);
    expect((await waitForRun(serve.url, started.body.run_id)).status).toBe('succeeded');

    const sent = service.requests.find((r) => r.url === '/echo');
    const [version, traceId, parentId, flags] = String(sent?.headers.traceparent).split('-');
    expect([version, traceId, flags]).toEqual(['00', CALLER.traceId, '01']);

    // The request's parent is the http node's own span, in the run's stretch under the caller's span.
    const call = await spanNamed('node call', CALLER.traceId);
    const run = await spanNamed('run traced', CALLER.traceId);
    expect(call.spanId).toBe(parentId);
    expect(call.parentSpanId).toBe(run.spanId);
    expect(run.parentSpanId).toBe(CALLER.spanId);
    expect(call.attributes).toMatchObject({ 'flowmend.node.type': 'http', 'flowmend.run.id': started.body.run_id });
    expect(run.resource['service.name']).toBe('flowmend-under-test');
  });

  it('starts a trace of its own for a request without one (this serve exports traces), and still sends it on', async () => {
    const started = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow: workflow('untraced') } });
    expect((await waitForRun(serve.url, started.body.run_id)).status).toBe('succeeded');
    const sent = service.requests.filter((r) => r.url === '/echo').at(-1);
    const traceId = String(sent?.headers.traceparent).split('-')[1] ?? '';
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(CALLER.traceId);
    const run = await spanNamed('run untraced', traceId);
    expect(run.parentSpanId).toBeUndefined();
  });

  it("writes its log as JSON lines, a node visit's with the run id, node id, visit and trace and span ids", async () => {
    const lines = serve
      .log()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(Object.keys(line).slice(0, 4)).toEqual(['level', 'message', 'timestamp', 'service']);
    const call = await spanNamed('node call', CALLER.traceId);
    const visit = lines.find((l) => l.message === 'node completed' && l.trace_id === CALLER.traceId && l.node_id === 'call');
    expect(visit).toMatchObject({
      level: 'INFO',
      node_type: 'http',
      visit: 1,
      span_id: call.spanId,
      service: 'flowmend-under-test',
      run_id: call.attributes['flowmend.run.id'],
    });
    expect(lines.find((l) => l.message === 'run succeeded' && l.trace_id === CALLER.traceId)).toMatchObject({ workflow: 'traced' });
  });

  it('answers GET /metrics with the run metrics as Prometheus text', async () => {
    const response = await fetch(`${serve.url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();
    expect(text).toMatch(/^flowmend_runs_started_total\{workflow="traced"\} 1$/m);
    expect(text).toMatch(/^flowmend_runs_ended_total\{workflow="traced",status="succeeded"\} 1$/m);
    expect(text).toMatch(/^flowmend_node_duration_count\{node_type="http",status="completed"\} 2$/m);
  });
});

describe('serve that sends no spans', () => {
  it("gives a run a trace id all the same: on its log lines and in the http node's traceparent", async () => {
    const plain = await startServe(join(makeTempDir('telemetry-serve-plain'), 'state'), 30_000);
    try {
      const started = await request<{ run_id: string }>(plain.url, 'POST', '/runs', { body: { workflow: workflow('plain') } });
      expect((await waitForRun(plain.url, started.body.run_id)).status).toBe('succeeded');
      const sent = service.requests.filter((r) => r.url === '/echo').at(-1);
      const [, traceId, spanId] = String(sent?.headers.traceparent).split('-');
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const lines = (await plain.untilLogged('"message":"run succeeded"'))
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      // The run's lines; not serve's own note that the run it drove ended ("run <id> succeeded").
      const ofRun = lines.filter((l) => l.run_id === started.body.run_id && !String(l.message).startsWith(`run ${started.body.run_id}`));
      expect(ofRun.map((l) => l.message)).toEqual(['run created', 'run started', 'node completed', 'node completed', 'run succeeded']);
      for (const line of ofRun) expect(line.trace_id, String(line.message)).toBe(traceId);
      expect(ofRun.find((l) => l.node_id === 'call')).toMatchObject({ visit: 1, span_id: spanId });
    } finally {
      await plain.stop();
    }
  });
});
