// OpenTelemetry from real runs: the real bin (`flowmend run`, then `flowmend resume`) with
// OTEL_EXPORTER_OTLP_ENDPOINT pointing at an OTLP/HTTP receiver on 127.0.0.1, a workflow that fails at a
// JSON key typo (repaired by the rules), runs an llm node on the fake Anthropic API, fails at a gate the
// repair cannot fix, and is resumed once the gate is open.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, parseJsonOutput, runCli, writeWorkflow } from '../support/cli-process.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver, total } from '../support/otlp-receiver.ts';

const CALLER = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };

let receiver: OtlpReceiver;
let fake: FakeAnthropic;
const dir = makeTempDir('telemetry');
const gate = join(dir, 'gate');
let runId = '';
let spans: ReceivedSpan[] = [];

const byName = (name: string) => spans.filter((s) => s.name === name);
const one = (name: string, where: (s: ReceivedSpan) => boolean = () => true): ReceivedSpan => {
  const found = byName(name).filter(where);
  if (found.length !== 1) throw new Error(`expected one span '${name}', got ${found.length}: ${spans.map((s) => s.name).join(', ')}`);
  return found[0] as ReceivedSpan;
};

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  fake = await startFakeAnthropic();
  fake.enqueue({ text: 'a summary', usage: { input_tokens: 120, output_tokens: 30 }, model: 'claude-haiku-4-5' });
  const workflow = writeWorkflow(dir, 'telemetry', {
    nodes: [
      { id: 'fetch', type: 'shell', params: { command: `echo '{"user":{"login":"octocat"}}'` } },
      { id: 'greet', type: 'shell', params: { command: 'echo hello ${fetch.stdout.user.logn}' } },
      { id: 'ask', type: 'llm', params: { prompt: 'Summarise: ${greet.stdout}', model: 'claude-haiku-4-5' } },
      { id: 'gate', type: 'shell', params: { command: `test -f ${gate}` } },
    ],
    edges: [
      { from: 'fetch', to: 'greet' },
      { from: 'greet', to: 'ask' },
      { from: 'ask', to: 'gate' },
    ],
  });
  const env = {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    ANTHROPIC_API_KEY: 'test-key',
    ANTHROPIC_BASE_URL: fake.baseURL,
    TRACEPARENT: `00-${CALLER.traceId}-${CALLER.spanId}-01`,
  };
  const stateDir = join(dir, 'state');
  const first = await runCli(['run', workflow, '--output-format', 'json'], { stateDir, env });
  const failed = parseJsonOutput<{ run_id: string; status: string }>(first);
  expect(failed.status, first.stderr).toBe('failed');
  runId = failed.run_id;
  writeFileSync(gate, '');
  const { TRACEPARENT: _caller, ...resumeEnv } = env;
  const resumed = parseJsonOutput<{ status: string }>(await runCli(['resume', runId, '--output-format', 'json'], { stateDir, env: resumeEnv }));
  expect(resumed.status).toBe('succeeded');
  spans = receiver.spans;
});

afterAll(async () => {
  await receiver.close();
  await fake.close();
});

describe('OpenTelemetry from a run that fails, is repaired and resumes', () => {
  it("puts every span of the run in the caller's trace, under the caller's span", () => {
    expect(spans.length).toBeGreaterThan(10);
    expect(new Set(spans.map((s) => s.traceId))).toEqual(new Set([CALLER.traceId]));
    const run = one('run telemetry');
    expect(run.parentSpanId).toBe(CALLER.spanId);
    expect(run.attributes).toMatchObject({ 'flowmend.run.id': runId, 'flowmend.run.status': 'failed' });
    expect(run.status.code).toBe(2);
    expect(run.resource['service.name']).toBe('flowmend-cli');
  });

  it('continues the trace in the resume: a stretch of its own, a child of the first and linked to it', () => {
    const run = one('run telemetry');
    const resume = one('resume telemetry');
    expect(resume.parentSpanId).toBe(run.spanId);
    expect(resume.links).toEqual([expect.objectContaining({ traceId: CALLER.traceId, spanId: run.spanId })]);
    expect(resume.attributes['flowmend.run.status']).toBe('succeeded');
    expect(resume.start).toBeGreaterThanOrEqual(run.end);
  });

  it('makes a span per node visit under its stretch, with the failure, the repair mark and the LLM usage', () => {
    const run = one('run telemetry');
    const resume = one('resume telemetry');
    const greets = byName('node greet').filter((s) => s.attributes['flowmend.node.replayed'] === false);
    expect(greets.map((s) => [s.attributes['flowmend.node.status'], s.attributes['flowmend.node.repaired'] ?? false])).toEqual([
      ['failed', false],
      ['completed', true],
    ]);
    expect(greets[0]?.attributes).toMatchObject({ 'flowmend.node.type': 'shell', 'flowmend.error.category': 'template', 'flowmend.node.visit': 1 });
    expect(greets[0]?.status.code).toBe(2);
    for (const s of greets) expect(s.parentSpanId).toBe(run.spanId);
    const ask = one('node ask', (s) => s.attributes['flowmend.node.replayed'] === false);
    expect(ask.attributes).toMatchObject({ 'gen_ai.request.model': 'claude-haiku-4-5', 'gen_ai.usage.input_tokens': 120, 'gen_ai.usage.output_tokens': 30 });
    expect(ask.attributes['flowmend.llm.cost_usd']).toBeGreaterThan(0);
    const gates = byName('node gate');
    expect(gates.map((s) => [s.attributes['flowmend.node.status'], s.parentSpanId])).toEqual([
      ['failed', run.spanId],
      ['completed', resume.spanId],
    ]);
  });

  it('makes a span per repair attempt: the rules fixed the typo, nothing could fix the closed gate', () => {
    const run = one('run telemetry');
    const applied = one('repair 1');
    expect(applied.parentSpanId).toBe(run.spanId);
    expect(applied.attributes).toMatchObject({
      'flowmend.repair.outcome': 'applied',
      'flowmend.repair.source': 'rules',
      'flowmend.repair.nodes_changed': ['greet'],
      'flowmend.node.id': 'greet',
    });
    expect(applied.end).toBeGreaterThanOrEqual(applied.start);
    expect(one('repair 2').attributes).toMatchObject({ 'flowmend.repair.outcome': 'failed', 'flowmend.node.id': 'gate' });
  });

  it('makes a span per replayed node, linked to the span of the visit it replays', () => {
    const resume = one('resume telemetry');
    const executed = one('node fetch', (s) => s.attributes['flowmend.node.replayed'] === false);
    const replays = byName('node fetch').filter((s) => s.attributes['flowmend.node.replayed'] === true);
    // Replayed after the repair (first stretch) and after the resume (second).
    expect(replays.length).toBe(2);
    const inResume = replays.find((s) => s.parentSpanId === resume.spanId);
    expect(inResume?.links).toEqual([expect.objectContaining({ spanId: executed.spanId })]);
    expect(inResume?.attributes['flowmend.node.type']).toBe('shell');
  });

  it('exports the run metrics: runs started and ended, repairs by source and outcome, node durations, LLM tokens and cost', () => {
    const { points } = receiver;
    expect(total(points, 'flowmend.runs.started', { workflow: 'telemetry' })).toBe(1);
    expect(total(points, 'flowmend.runs.ended', { workflow: 'telemetry', status: 'failed' })).toBe(1);
    expect(total(points, 'flowmend.runs.ended', { workflow: 'telemetry', status: 'succeeded' })).toBe(1);
    expect(total(points, 'flowmend.repairs', { source: 'rules', outcome: 'applied' })).toBe(1);
    expect(total(points, 'flowmend.repairs', { outcome: 'failed' })).toBe(1);
    // fetch, greet twice, gate twice: shell visits executed over both processes.
    expect(total(points, 'flowmend.node.duration', { node_type: 'shell' })).toBe(5);
    const llm = { workflow: 'telemetry', model: 'claude-haiku-4-5', purpose: 'node' };
    expect(total(points, 'flowmend.llm.tokens', { ...llm, token_type: 'input' })).toBe(120);
    expect(total(points, 'flowmend.llm.tokens', { ...llm, token_type: 'output' })).toBe(30);
    expect(total(points, 'flowmend.llm.cost', llm)).toBeGreaterThan(0);
  });
});
