import type { LlmUsage, RunItem, RunObservation } from '../core/index.ts';

/**
 * The metrics of runs, one table for both ways out: OpenTelemetry instruments (OTLP, Prometheus) and
 * CloudWatch's Embedded Metric Format on AWS. Attribute keys are plain words, so they read the same as
 * Prometheus labels and CloudWatch dimensions.
 */
export const RUN_METRICS = {
  runsStarted: { name: 'flowmend.runs.started', kind: 'counter', unit: '{run}', description: 'Runs created, per workflow' },
  runsEnded: {
    name: 'flowmend.runs.ended',
    kind: 'counter',
    unit: '{run}',
    description: 'Runs that stopped, per workflow and status (succeeded, failed, cancelled, interrupted)',
  },
  nodeDuration: {
    name: 'flowmend.node.duration',
    kind: 'histogram',
    unit: 's',
    description: 'Node visits executed, by node type and status: how long each took',
  },
  repairs: {
    name: 'flowmend.repairs',
    kind: 'counter',
    unit: '{repair}',
    description: 'Repair attempts, per source (rules, llm) and outcome (applied, refused, failed)',
  },
  llmTokens: {
    name: 'flowmend.llm.tokens',
    kind: 'counter',
    unit: '{token}',
    description: 'LLM tokens, per workflow, model, token type (input, output) and purpose (node, repair)',
  },
  llmCost: { name: 'flowmend.llm.cost', kind: 'counter', unit: 'USD', description: 'LLM cost in US dollars, per workflow, model and purpose (node, repair)' },
} as const;

export type RunMetricName = keyof typeof RUN_METRICS;

export interface MetricPoint {
  metric: RunMetricName;
  value: number;
  attributes: Record<string, string>;
}

/** The run's workflow; a child run counts under its parent's workflow name and node (`parent/node`). */
const workflowOf = (run: RunItem): Record<string, string> => ({ workflow: run.workflowName });

const usagePoints = (run: RunItem, usage: LlmUsage, purpose: 'node' | 'repair'): MetricPoint[] => {
  const base = { ...workflowOf(run), model: usage.model, purpose };
  return [
    { metric: 'llmTokens', value: usage.input_tokens, attributes: { ...base, token_type: 'input' } },
    { metric: 'llmTokens', value: usage.output_tokens, attributes: { ...base, token_type: 'output' } },
    { metric: 'llmCost', value: usage.cost_usd, attributes: base },
  ];
};

/** The data points one observation adds. */
export const metricPointsOf = (o: RunObservation): MetricPoint[] => {
  switch (o.kind) {
    case 'run_created':
      return [{ metric: 'runsStarted', value: 1, attributes: workflowOf(o.run) }];
    case 'run_stopped':
      return [{ metric: 'runsEnded', value: 1, attributes: { ...workflowOf(o.run), status: o.status } }];
    case 'node_visited': {
      const r = o.record;
      const points: MetricPoint[] = [
        {
          metric: 'nodeDuration',
          value: (r.durationMs ?? (r.finishedAt ?? r.startedAt) - r.startedAt) / 1000,
          attributes: { node_type: r.nodeType, status: r.status },
        },
      ];
      return r.usage ? [...points, ...usagePoints(o.run, r.usage, 'node')] : points;
    }
    case 'repair_ended': {
      const points: MetricPoint[] = [{ metric: 'repairs', value: 1, attributes: { source: o.source, outcome: o.attempt.outcome } }];
      return o.attempt.usage ? [...points, ...usagePoints(o.run, o.attempt.usage, 'repair')] : points;
    }
    case 'run_started':
    case 'run_resumed':
    case 'nodes_replayed':
    case 'repair_started':
    case 'execution_continued':
    case 'engine_step':
    case 'node_retrying':
      return [];
  }
};
