// Spans RunSpans makes from observations, read off the SDK's in-memory exporter (the real TracerProvider).
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { describe, expect, it } from 'vitest';
import { PresetIds, RunSpans } from '../../functions/adapters/otel/run-spans.ts';
import { aRun } from '../support/builders.ts';

// Epoch times: the SDK takes a small number for a time since the process started.
const T = Date.parse('2026-11-26T00:00:00Z');
const trace = { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', rootSpanId: 'eee19b7ec3c1b174', since: T, sampled: true };

const spansOf = () => {
  const exporter = new InMemorySpanExporter();
  const ids = new PresetIds();
  const provider = new TracerProvider({ idGenerator: ids, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  return { exporter, provider, spans: new RunSpans(provider.getTracer('test'), ids) };
};

describe('RunSpans', () => {
  it("makes a span of the wait before a node's next try, as long as the Wait state waits (whole seconds)", async () => {
    const { exporter, provider, spans } = spansOf();
    const run = aRun({ runId: 'run-waits', workflowName: 'flaky', trace });
    spans.observe([
      { kind: 'node_retrying', run, at: T + 5000, nodeId: 'call', attempt: 1, max: 3, waitS: 1.5 },
      { kind: 'node_retrying', run, at: T + 9000, nodeId: 'call', attempt: 2, max: 3, waitS: 0 },
    ]);
    await provider.forceFlush();
    const made = exporter.getFinishedSpans();
    expect(made.map((s) => s.name)).toEqual(['wait call']);
    const [wait] = made;
    expect(wait?.spanContext().traceId).toBe(trace.traceId);
    expect(wait?.parentSpanContext?.spanId).toBe(trace.spanId);
    expect(wait?.attributes).toMatchObject({
      'flowmend.run.id': 'run-waits',
      'flowmend.node.id': 'call',
      'flowmend.wait.reason': 'retry',
      'flowmend.wait.seconds': 2,
      'flowmend.node.attempt': 2,
    });
    const ms = (t: [number, number] | undefined) => (t ? t[0] * 1000 + t[1] / 1e6 : Number.NaN);
    expect(ms(wait?.startTime)).toBe(T + 5000);
    expect(ms(wait?.endTime)).toBe(T + 7000);
  });
});
