// What a team watching the deployed stack sees of a run: its Lambdas' log lines (Powertools Logger, JSON,
// with run id, node id, visit and trace id) and EMF metric lines (Powertools Metrics) in the functions'
// log groups, one trace id across the run's functions and executions, the traceparent its http node
// sends, and the spans the functions export to an OTLP endpoint (the `otlpEndpoint` prop's deployment,
// made on the deployed functions: see support/with-otlp.ts). What moto cannot show is said in
// docs/observability.md: it makes no X-Ray segments, turns no EMF line into a metric, applies no log level.

import { GetFunctionConfigurationCommand, ListFunctionsCommand } from '@aws-sdk/client-lambda';
import { DescribeStateMachineCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visitSpanId } from '../../functions/core/index.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { deployedStack } from './support/emulator-state.ts';
import { callsNotAllowed, type DeployedStack, explain, useDeployedStack } from './support/stack.ts';
import { withOtlpEndpoint } from './support/with-otlp.ts';

const CALLER = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
/** Functions that write runs. */
const WRITERS = ['Advance', 'Repair', 'Api'] as const;
/** CloudWatch's units (EMF rejects a metric whose unit is not one of them). */
const UNITS = ['Seconds', 'Microseconds', 'Milliseconds', 'Bytes', 'Kilobytes', 'Megabytes', 'Gigabytes', 'Terabytes', 'Bits', 'Count', 'Percent', 'None'];

type Line = Record<string, unknown>;

let stack: DeployedStack;
let mark = 0;
let http: HttpTestServer;
let receiver: OtlpReceiver;
let restore: (() => Promise<void>) | undefined;
let runId = '';
let plainRunId = '';

/** Every line about `run` in the log group the stack gives function `fn` (`<stack>-<fn>Logs...`), parsed (each must be JSON). */
const linesOf = async (fn: string, run: string): Promise<Line[]> =>
  (await stack.functionLogs(`-${fn}Logs`)).filter((text) => text.includes(run)).map((text) => JSON.parse(text) as Line);

/** Waits for what the last invocation of a run files after the run is already written (its log, its export). */
const eventually = async <T>(what: string, read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not there after 20 s: ${JSON.stringify(value).slice(0, 3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
};

const spansOf = (run: string): ReceivedSpan[] => receiver.spans.filter((s) => s.attributes['flowmend.run.id'] === run);

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
  http = await startHttpTestServer();
  http.route('/hello', { body: { hello: 'world' } });
  receiver = await startOtlpReceiver();
  const { endpoint, assembly } = await deployedStack();
  restore = await withOtlpEndpoint({ endpoint, assembly, lambda: stack.lambda, logicalPrefixes: ['Advance'], otlpEndpoint: receiver.url });

  // Fails at a JSON key typo the rules repair, calls an http service, and is long enough to continue as a
  // new execution (the emulator's stack continues every 12 engine steps).
  const chain = Array.from({ length: 9 }, (_, i) => ({ id: `t${i}`, type: 'transform', params: { expression: `${i}` } }));
  const workflow = {
    ir_version: '0.1.0',
    nodes: [
      { id: 'fetch', type: 'shell', params: { command: `echo '{"user":{"login":"octocat"}}'` } },
      { id: 'greet', type: 'shell', params: { command: 'echo hello ${fetch.stdout.user.logn}' } },
      { id: 'call', type: 'http', params: { url: `${http.url}/hello` } },
      ...chain,
    ],
    edges: [
      { from: 'fetch', to: 'greet' },
      { from: 'greet', to: 'call' },
      { from: 'call', to: 't0' },
      ...chain.slice(1).map((t, i) => ({ from: `t${i}`, to: t.id })),
    ],
    outputs: { said: { source: '${greet.stdout}' } },
  };
  const started = await stack.api.call<{ run_id: string }>('POST', '/runs', {
    body: { workflow, name: 'observed' },
    headers: { traceparent: `00-${CALLER.traceId}-${CALLER.spanId}-01` },
  });
  runId = started.run_id;
  const report = await stack.waitFor(runId);
  expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { said: 'hello octocat' } });

  const plain = { ir_version: '0.1.0', nodes: [{ id: 'ping', type: 'http', params: { url: `${http.url}/hello?plain` } }] };
  plainRunId = await stack.start({ workflow: plain, name: 'plain' });
  const plainReport = await stack.waitFor(plainRunId);
  expect(plainReport.status, explain(plainReport)).toBe('succeeded');
}, 240_000);

afterAll(async () => {
  await restore?.();
  await http?.close();
  await receiver?.close();
});

describe('observability of a run on the stack deployed to the AWS emulator', () => {
  it("writes the run's lines to the functions' log groups as JSON, each with the run id and the caller's trace id", async () => {
    const advance = await eventually(
      'the last Advance line',
      () => linesOf('Advance', runId),
      (lines) => lines.some((l) => l.message === 'run succeeded'),
    );
    const api = await linesOf('Api', runId);
    const logged = [...advance, ...api].filter((l) => l.message !== undefined);
    // The API creates the run; the engine (Advance) writes the rest, the repair's outcome included (the Repair
    // function proposes a version; the Advance after it records the attempt).
    expect(api.map((l) => l.message)).toContain('run created');
    expect(advance.map((l) => l.message)).toEqual(
      expect.arrayContaining([
        'run started',
        'node failed',
        'repair started',
        'repair applied',
        'node completed',
        'execution continued as a new one',
        'run succeeded',
      ]),
    );
    for (const line of logged) {
      expect(line, String(line.message)).toMatchObject({ run_id: runId, workflow: 'observed', trace_id: CALLER.traceId, service: 'flowmend' });
      expect(typeof line.level).toBe('string');
      expect(Number.isNaN(Date.parse(String(line.timestamp)))).toBe(false);
    }
  });

  it('writes a line per node visit with its node id, visit, span id and outcome; the repair its source and the nodes it changed', async () => {
    const advance = await linesOf('Advance', runId);
    const visits = advance.filter((l) => typeof l.message === 'string' && l.message.startsWith('node ') && l.message !== 'node replayed');
    expect(visits.map((l) => [l.node_id, l.visit, l.status])).toEqual([
      ['fetch', 1, 'completed'],
      ['greet', 1, 'failed'],
      ['greet', 1, 'completed'],
      ['call', 1, 'completed'],
      ...Array.from({ length: 9 }, (_, i) => [`t${i}`, 1, 'completed']),
    ]);
    for (const line of visits) expect(line.span_id, String(line.node_id)).toBe(visitSpanId(runId, Number(line.seq)));
    expect(visits[1]).toMatchObject({ level: 'WARN', node_type: 'shell', error_category: 'template' });
    const [applied] = advance.filter((l) => l.message === 'repair applied');
    expect(applied).toMatchObject({ source: 'rules', outcome: 'applied', nodes_changed: ['greet'], node_id: 'greet', attempt: 1 });
  });

  it('writes EMF lines (Powertools Metrics) that CloudWatch can read: a node duration per visit, the run started and ended, the repair', async () => {
    const emf = [...(await linesOf('Advance', runId)), ...(await linesOf('Api', runId))].filter((l) => l._aws !== undefined);
    for (const line of emf) {
      const aws = line._aws as {
        Timestamp: unknown;
        CloudWatchMetrics: { Namespace: unknown; Dimensions: unknown; Metrics: { Name: string; Unit: string }[] }[];
      };
      expect(typeof aws.Timestamp).toBe('number');
      expect(aws.CloudWatchMetrics).toHaveLength(1);
      const [directive] = aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe('flowmend');
      // Each dimension set names fields of the line holding strings; each metric names a number of the line.
      const dimensions = directive?.Dimensions as string[][];
      for (const name of dimensions.flat()) expect(typeof line[name], name).toBe('string');
      for (const metric of directive?.Metrics ?? []) {
        expect(typeof line[metric.Name], metric.Name).toBe('number');
        expect(UNITS).toContain(metric.Unit);
      }
      expect(line.run_id).toBe(runId);
    }
    const points = (name: string) => emf.filter((l) => l[name] !== undefined);
    expect(points('flowmend.runs.started').map((l) => l.workflow)).toEqual(['observed']);
    expect(points('flowmend.runs.ended').map((l) => [l.workflow, l.status])).toEqual([['observed', 'succeeded']]);
    expect(points('flowmend.repairs').map((l) => [l.source, l.outcome])).toEqual([['rules', 'applied']]);
    const durations = points('flowmend.node.duration');
    // fetch, greet twice, call, nine transforms: every executed visit.
    expect(durations.map((l) => `${l.node_type}/${l.status}`).sort()).toEqual(
      ['shell/completed', 'shell/failed', 'shell/completed', 'http/completed', ...Array(9).fill('transform/completed')].sort(),
    );
  });

  it("sends the run's trace on with the http node's request, its parent the visit's span", async () => {
    const sent = http.requests.find((r) => r.url === '/hello');
    const [version, traceId, parent, flags] = String(sent?.headers.traceparent).split('-');
    expect([version, traceId, flags]).toEqual(['00', CALLER.traceId, '01']);
    const call = (await linesOf('Advance', runId)).find((l) => l.node_id === 'call' && l.message === 'node completed');
    expect(call?.span_id).toBe(parent);
  });

  it('gives a run started without a traceparent a trace id of its own, the same in every function and in its http request', async () => {
    const lines = await eventually(
      'the plain run lines',
      async () => [...(await linesOf('Api', plainRunId)), ...(await linesOf('Advance', plainRunId))].filter((l) => l.message !== undefined),
      (found) => found.some((l) => l.message === 'run succeeded'),
    );
    const traceId = lines[0]?.trace_id;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe(CALLER.traceId);
    for (const line of lines) expect(line.trace_id, String(line.message)).toBe(traceId);
    const sent = http.requests.find((r) => r.url === '/hello?plain');
    expect(String(sent?.headers.traceparent).split('-')[1]).toBe(traceId);
  });

  it("exports the run's spans from the deployed engine (Advance) to the OTLP endpoint, in the caller's trace, across executions", async () => {
    const spans = await eventually(
      'the run span',
      async () => spansOf(runId),
      (found) => found.some((s) => s.name === 'run observed'),
    );
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([CALLER.traceId]));
    const run = spans.find((s) => s.name === 'run observed') as ReceivedSpan;
    expect(run.parentSpanId).toBe(CALLER.spanId);
    expect(run.attributes['flowmend.run.status']).toBe('succeeded');
    const call = spans.find((s) => s.name === 'node call');
    expect(call?.spanId).toBe(String(http.requests.find((r) => r.url === '/hello')?.headers.traceparent).split('-')[2]);
    expect(call?.parentSpanId).toBe(run.spanId);
    expect(spans.find((s) => s.name === 'repair 1')?.attributes).toMatchObject({ 'flowmend.repair.outcome': 'applied', 'flowmend.repair.source': 'rules' });
    expect(spans.filter((s) => s.name === 'continue as new execution').length).toBeGreaterThanOrEqual(1);
    expect(spans.filter((s) => s.name.startsWith('node t')).every((s) => s.parentSpanId === run.spanId)).toBe(true);
  });

  it('deploys X-Ray active tracing on the functions that write runs and on the state machines (moto makes no segments)', async () => {
    const { outputs } = stack;
    for (const name of WRITERS) {
      const fn = (await stack.lambda.send(new GetFunctionConfigurationCommand({ FunctionName: await functionNamed(name) }))).TracingConfig;
      expect(fn?.Mode, name).toBe('Active');
    }
    for (const arn of [outputs.ExpressStateMachineArn, outputs.StandardStateMachineArn]) {
      const machine = await stack.sfn.send(new DescribeStateMachineCommand({ stateMachineArn: arn }));
      expect(machine.tracingConfiguration?.enabled, arn).toBe(true);
    }
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});

/** The deployed name of the function whose logical id starts with `prefix`. */
async function functionNamed(prefix: string): Promise<string> {
  const all = (await stack.lambda.send(new ListFunctionsCommand({}))).Functions ?? [];
  const found = all.find((f) => f.FunctionName?.startsWith(`FlowmendEmulator-${prefix}`));
  if (!found?.FunctionName) throw new Error(`no function ${prefix}: ${all.map((f) => f.FunctionName).join(', ')}`);
  return found.FunctionName;
}
