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
