import { describe, expect, it } from 'vitest';
import { type LogLevel, RunLog } from '../../functions/adapters/run-log.ts';
import { Redactor, visitSpanId } from '../../functions/core/index.ts';
import { JsonLines } from '../../functions/hosts/telemetry/json-lines.ts';
import { aNodeRecord, aRun } from '../support/builders.ts';

const SECRET = 'sk-live-0123456789';
const trace = { traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), rootSpanId: 'b'.repeat(16), since: 0, sampled: true };

describe('RunLog', () => {
  it("writes a node visit's line with its run, node, visit, trace and span, the secret redacted", () => {
    const lines: { level: LogLevel; message: string; fields: Record<string, unknown> }[] = [];
    const log = new RunLog({ write: (level, message, fields) => lines.push({ level, message, fields }) }, new Redactor([SECRET]));
    const run = aRun({ runId: 'run-logged', trace });
    const record = aNodeRecord({
      runId: 'run-logged',
      seq: 4,
      nodeId: 'deploy',
      visit: 2,
      status: 'failed',
      finishedAt: 14,
      error: { code: 'EXIT_NONZERO', message: `curl: bad token ${SECRET}` },
    });
    log.observe([{ kind: 'node_visited', run, record, category: 'execution_failure' }]);
    expect(lines).toEqual([
      {
        level: 'WARN',
        message: 'node failed',
        fields: {
          run_id: 'run-logged',
          workflow: 'workflow',
          trace_id: trace.traceId,
          node_id: 'deploy',
          node_type: 'shell',
          visit: 2,
          seq: 4,
          span_id: visitSpanId('run-logged', 4),
          status: 'failed',
          duration_ms: 10,
          error_code: 'EXIT_NONZERO',
          error: 'curl: bad token [redacted]',
          error_category: 'execution_failure',
        },
      },
    ]);
  });

  it('writes every field a node visit can have, in the same order on every line (the JSON text, byte for byte)', () => {
    const out: string[] = [];
    const log = new RunLog(
      new JsonLines(
        (line) => out.push(line),
        'DEBUG',
        'flowmend-serve',
        () => Date.UTC(2026, 0, 2),
      ),
    );
    const run = aRun({ runId: 'run-child', trace, parent: { runId: 'run-parent', nodeId: 'call', seq: 3, depth: 1, errorAction: 'error' } });
    const record = aNodeRecord({
      runId: 'run-child',
      seq: 7,
      nodeId: 'ask',
      nodeType: 'llm',
      visit: 3,
      status: 'failed',
      startedAt: 100,
      finishedAt: 160,
      durationMs: 42.4,
      action: 'error',
      repaired: true,
      attempt: 2,
      iteration: 5,
      error: { code: 'LLM_FAILED', message: 'overloaded' },
      usage: { model: 'claude-sonnet-4-6', input_tokens: 12, output_tokens: 34, cost_usd: 0.01 },
    });
    log.observe([{ kind: 'node_visited', run, record, category: 'transient' }]);
    log.observe([
      { kind: 'node_visited', run: aRun({ runId: 'run-plain' }), record: aNodeRecord({ runId: 'run-plain', seq: 1, status: 'completed', finishedAt: 3 }) },
    ]);
    expect(out).toEqual([
      `{"level":"WARN","message":"node failed","timestamp":"2026-01-02T00:00:00.000Z","service":"flowmend-serve","run_id":"run-child","workflow":"workflow","parent_run_id":"run-parent","trace_id":"${trace.traceId}","node_id":"ask","node_type":"llm","visit":3,"seq":7,"span_id":"${visitSpanId('run-child', 7)}","status":"failed","duration_ms":42,"action":"error","repaired":true,"attempt":2,"iteration":5,"error_code":"LLM_FAILED","error":"overloaded","error_category":"transient","model":"claude-sonnet-4-6","input_tokens":12,"output_tokens":34,"cost_usd":0.01}`,
      '{"level":"INFO","message":"node completed","timestamp":"2026-01-02T00:00:00.000Z","service":"flowmend-serve","run_id":"run-plain","workflow":"workflow","node_id":"n1","node_type":"shell","visit":1,"seq":1,"status":"completed","duration_ms":2}',
    ]);
  });
});

describe('JsonLines', () => {
  it('writes JSON in the shape of Powertools Logger, at and above its level', () => {
    const out: string[] = [];
    const lines = new JsonLines(
      (line) => out.push(line),
      'WARN',
      'flowmend-serve',
      () => Date.UTC(2026, 0, 2),
    );
    lines.write('INFO', 'quiet', { run_id: 'r' });
    lines.write('ERROR', 'run failed', { run_id: 'r' });
    expect(out.map((line) => JSON.parse(line))).toEqual([
      { level: 'ERROR', message: 'run failed', timestamp: '2026-01-02T00:00:00.000Z', service: 'flowmend-serve', run_id: 'r' },
    ]);
  });
});
