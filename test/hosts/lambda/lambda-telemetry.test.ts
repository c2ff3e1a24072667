// What the Lambdas write for a run: Powertools Logger's JSON lines and Powertools Metrics' EMF lines,
// read off the function's stdout (where the Lambda runtime takes them to CloudWatch Logs).
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunObservation } from '../../../functions/core/index.ts';
import { makeLambdaTelemetry } from '../../../functions/hosts/lambda/lambda-telemetry.ts';
import { aNodeRecord, aRun } from '../../support/builders.ts';

const written = (spy: { mock: { calls: unknown[][] } }): Record<string, unknown>[] =>
  spy.mock.calls
    .map((call) => String(call[0]))
    .flatMap((text) => text.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

afterEach(() => {
  vi.restoreAllMocks();
});

describe('lambdaTelemetry', () => {
  it('writes a JSON log line and EMF metrics for what a run did, each with the run id', () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const telemetry = makeLambdaTelemetry({ POWERTOOLS_SERVICE_NAME: 'flowmend-test', POWERTOOLS_LOG_LEVEL: 'INFO' });
    const run = aRun({ runId: 'run-on-lambda', workflowName: 'nightly' });
    const record = aNodeRecord({ runId: 'run-on-lambda', seq: 1, nodeId: 'fetch', status: 'completed', finishedAt: 2501, durationMs: 2500 });
    const observations: RunObservation[] = [
      { kind: 'run_created', run, at: 0 },
      { kind: 'node_visited', run, record },
      { kind: 'run_stopped', run, at: 3000, status: 'succeeded' },
    ];
    telemetry.observer.observe(observations);
    const lines = written(stdout);

    const logs = lines.filter((line) => line.message !== undefined);
    expect(logs.map((l) => [l.level, l.message, l.run_id])).toEqual([
      ['INFO', 'run created', 'run-on-lambda'],
      ['INFO', 'node completed', 'run-on-lambda'],
      ['INFO', 'run succeeded', 'run-on-lambda'],
    ]);
    expect(logs[1]).toMatchObject({ service: 'flowmend-test', node_id: 'fetch', visit: 1, workflow: 'nightly' });

    const emf = lines.filter((line) => line._aws !== undefined);
    const directives = emf.map(
      (line) =>
        (line._aws as { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] }).CloudWatchMetrics[0],
    );
    expect(directives.map((d) => [d?.Namespace, d?.Metrics[0]?.Name, d?.Metrics[0]?.Unit, d?.Dimensions[0]])).toEqual([
      ['flowmend', 'flowmend.runs.started', 'Count', ['service', 'workflow']],
      ['flowmend', 'flowmend.node.duration', 'Seconds', ['service', 'node_type', 'status']],
      ['flowmend', 'flowmend.runs.ended', 'Count', ['service', 'workflow', 'status']],
    ]);
    expect(emf[1]).toMatchObject({ 'flowmend.node.duration': 2.5, node_type: 'shell', status: 'completed', run_id: 'run-on-lambda', service: 'flowmend-test' });
  });

  it('gives every run started on Lambda a trace, with no OTLP endpoint: its id is on every line of the run', () => {
    expect(makeLambdaTelemetry({}).traced).toBe(true);
  });

  it("keeps the function's own credentials out of its lines (the error a node recorded quoted them)", () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const telemetry = makeLambdaTelemetry({ AWS_SECRET_ACCESS_KEY: secret, POWERTOOLS_LOG_LEVEL: 'INFO' });
    const run = aRun({ runId: 'run-leaky' });
    const record = aNodeRecord({ runId: 'run-leaky', seq: 1, nodeId: 'env', status: 'failed', error: { code: 'EXIT_1', message: `saw ${secret} in env` } });
    telemetry.observer.observe([{ kind: 'node_visited', run, record }]);
    const lines = [...written(stdout), ...written(stderr)];
    expect(lines.find((l) => l.message === 'node failed')).toMatchObject({ level: 'WARN', run_id: 'run-leaky', error: 'saw [redacted] in env' });
    expect(JSON.stringify(lines)).not.toContain(secret);
  });

  it("writes its EMF lines whatever the lines' level (Lambda's filter takes a line without a level for INFO)", () => {
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    // As the stack sets a function that writes metrics with functionLogLevel WARN: Lambda's level INFO, the lines' WARN.
    const telemetry = makeLambdaTelemetry({ AWS_LAMBDA_LOG_LEVEL: 'INFO', FLOWMEND_LOG_LEVEL: 'WARN' });
    const run = aRun({ runId: 'run-quiet' });
    const ok = aNodeRecord({ runId: 'run-quiet', seq: 1, status: 'completed', finishedAt: 11, durationMs: 10 });
    const bad = aNodeRecord({ runId: 'run-quiet', seq: 2, status: 'failed', finishedAt: 12, durationMs: 10, error: { code: 'EXIT_1', message: 'exit 1' } });
    telemetry.observer.observe([
      { kind: 'node_visited', run, record: ok },
      { kind: 'node_visited', run, record: bad },
    ]);
    const lines = [...written(stdout), ...written(stderr)];
    expect(lines.filter((l) => l.message !== undefined).map((l) => l.message)).toEqual(['node failed']);
    expect(lines.filter((l) => l._aws !== undefined).map((l) => l.status)).toEqual(['completed', 'failed']);
  });
});
