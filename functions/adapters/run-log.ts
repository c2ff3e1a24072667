import type { Redactor, RunItem, RunObservation, RunObserver } from '../core/index.ts';
import { visitSpanId } from '../core/index.ts';

export type LogLevel = 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';

/** Where structured log lines go: Powertools Logger on Lambda, JSON lines on serve's stderr. */
export interface LogWriter {
  write(level: LogLevel, message: string, fields: Record<string, unknown>): void;
}

/** Longest message a line carries (the store keeps the whole error). */
const MESSAGE_CHARS = 1000;

/**
 * The fields every line about a run has: its id, workflow and trace, so one query finds all of a run's lines.
 * A fresh object, which a line adds its own fields to by assignment: a spread after the first key of an object
 * literal is a runtime call in V8, and a node's line made of ten of them cost ~14 µs, three quarters of its CPU.
 */
const runFields = (run: RunItem): Record<string, unknown> => {
  const fields: Record<string, unknown> = { run_id: run.runId, workflow: run.workflowName };
  if (run.parent) fields.parent_run_id = run.parent.runId;
  if (run.trace) fields.trace_id = run.trace.traceId;
  return fields;
};

/**
 * Log lines of what runs do, one per observation worth a line: run created, started, resumed and
 * stopped, each node visit (run id, node id, visit, trace and span ids), repairs, continues. Texts that
 * may hold a value from a run (error messages, repair reasons) go through the redactor.
 */
export class RunLog implements RunObserver {
  constructor(
    private readonly writer: LogWriter,
    private readonly redactor?: Redactor,
  ) {}

  private text(message: string): string {
    const clipped = message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS)}…` : message;
    return this.redactor ? this.redactor.text(clipped) : clipped;
  }

  observe(observations: readonly RunObservation[]): void {
    for (const o of observations) this.one(o);
  }

  private one(o: RunObservation): void {
    const run = runFields(o.run);
    switch (o.kind) {
      case 'run_created':
        this.writer.write('INFO', 'run created', run);
        return;
      case 'run_started':
        this.writer.write('INFO', 'run started', run);
        return;
      case 'run_resumed':
        this.writer.write('INFO', 'run resumed', { ...run, detail: this.text(o.message) });
        return;
      case 'run_stopped': {
        const level = o.status === 'succeeded' ? 'INFO' : o.status === 'failed' ? 'ERROR' : 'WARN';
        const error = o.error ? { error_code: o.error.code, error_category: o.error.category, error: this.text(o.error.message) } : {};
        this.writer.write(level, `run ${o.status}`, { ...run, status: o.status, ...(o.error?.node_id ? { node_id: o.error.node_id } : {}), ...error });
        return;
      }
      case 'node_visited': {
        const r = o.record;
        const level = r.status === 'completed' ? 'INFO' : 'WARN';
        run.node_id = r.nodeId;
        run.node_type = r.nodeType;
        run.visit = r.visit;
        run.seq = r.seq;
        if (o.run.trace) run.span_id = visitSpanId(o.run.runId, r.seq);
        run.status = r.status;
        run.duration_ms = Math.round(r.durationMs ?? (r.finishedAt ?? r.startedAt) - r.startedAt);
        if (r.action) run.action = r.action;
        if (r.repaired) run.repaired = true;
        if (r.attempt !== undefined) run.attempt = r.attempt;
        if (r.iteration !== undefined) run.iteration = r.iteration;
        if (r.error) {
          run.error_code = r.error.code;
          run.error = this.text(r.error.message);
        }
        if (o.category) run.error_category = o.category;
        if (r.usage) {
          run.model = r.usage.model;
          run.input_tokens = r.usage.input_tokens;
          run.output_tokens = r.usage.output_tokens;
          run.cost_usd = r.usage.cost_usd;
        }
        this.writer.write(level, `node ${r.status}`, run);
        return;
      }
      case 'nodes_replayed':
        for (const node of o.nodes)
          this.writer.write('DEBUG', 'node replayed', { ...run, node_id: node.id, seq: node.seq, ...(node.type ? { node_type: node.type } : {}) });
        return;
      case 'repair_started':
        this.writer.write('INFO', 'repair started', {
          ...run,
          attempt: o.attempt,
          ...(o.nodeId ? { node_id: o.nodeId } : {}),
          ...(o.code ? { error_code: o.code } : {}),
          ...(o.category ? { error_category: o.category } : {}),
        });
        return;
      case 'repair_ended': {
        const a = o.attempt;
        this.writer.write(a.outcome === 'applied' ? 'INFO' : 'WARN', `repair ${a.outcome}`, {
          ...run,
          attempt: a.attempt,
          source: o.source,
          outcome: a.outcome,
          nodes_changed: o.nodesChanged,
          reason: this.text(a.reason),
          ...(a.nodeId ? { node_id: a.nodeId } : {}),
          ...(a.usage ? { model: a.usage.model, input_tokens: a.usage.input_tokens, output_tokens: a.usage.output_tokens, cost_usd: a.usage.cost_usd } : {}),
        });
        return;
      }
      case 'node_retrying':
        this.writer.write('WARN', 'node retrying', { ...run, node_id: o.nodeId, attempt: o.attempt, max_attempts: o.max, wait_s: o.waitS });
        return;
      case 'engine_step':
        this.writer.write('DEBUG', 'engine step', { ...run, duration_ms: o.at - o.startedAt, replayed: o.replayed });
        return;
      case 'execution_continued':
        this.writer.write('INFO', 'execution continued as a new one', { ...run, ...(o.nodeId ? { node_id: o.nodeId } : {}) });
        return;
    }
  }
}
