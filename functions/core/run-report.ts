import type { IrVersionItem, RunError, RunEvent, RunItem, RunStatus, NodeRecord, NodeRecordStatus } from './run-model.ts';
import type { RunStore } from './run-store.ts';
import { itemsByBatch, type ReportBatch, reportBatch } from './batch/batch-report.ts';

export interface ReportStep {
  node_id: string;
  seq?: number;
  visit?: number;
  status: NodeRecordStatus | 'cached' | 'running';
  action?: string;
  duration_ms: number;
  cached: boolean;
  repaired: boolean;
  interrupted: boolean;
  error?: string;
  /** A batch node's items (batch/batch-report.ts). */
  batch?: ReportBatch;
}

export interface ReportRepair {
  attempt: number;
  version: number;
  source: IrVersionItem['source'];
  reason: string;
  nodes_changed: string[];
  diff: string[];
  tokens: { input: number; output: number };
  cost_usd: number;
}

/** The one object `--output-format json` prints (DESIGN section 8). */
export interface RunReport {
  success: boolean;
  status: RunStatus;
  run_id: string;
  workflow: string;
  /** The registered workflow's version the run started from. */
  workflow_version?: number;
  result: Record<string, unknown>;
  errors: RunError[];
  warnings: RunError[];
  repairs: ReportRepair[];
  steps: ReportStep[];
  /** The node that was running when the report was made (a run in progress). */
  current?: { node_id: string; seq: number; started_at: string };
  metrics: {
    duration_ms: number;
    nodes_executed: number;
    nodes_cached: number;
    llm: { input_tokens: number; output_tokens: number; cost_usd: number };
    repair: { input_tokens: number; output_tokens: number; cost_usd: number };
    total_cost_usd: number;
  };
}

const stepOf = (record: NodeRecord, items: ReadonlyMap<number, NodeRecord[]>): ReportStep => ({
  node_id: record.nodeId,
  seq: record.seq,
  visit: record.visit,
  status: record.status,
  ...(record.action ? { action: record.action } : {}),
  duration_ms: Math.round((record.durationMs ?? 0) * 10) / 10,
  cached: false,
  repaired: record.repaired ?? false,
  interrupted: record.interrupted ?? false,
  ...(record.error ? { error: record.error.message } : {}),
  ...(record.batch ? { batch: reportBatch(items.get(record.seq) ?? [], record.batch.count) } : {}),
});

/** Executed steps and replayed (cached) ones, in the order they happened. */
const orderedSteps = (steps: readonly NodeRecord[], events: readonly RunEvent[]): ReportStep[] => {
  // Items show inside their batch's step, not as steps of their own.
  const items = itemsByBatch(steps);
  const timeline: { at: number; order: number; step: ReportStep }[] = steps.filter((s) => !s.item).map((s) => ({ at: s.startedAt, order: s.seq, step: stepOf(s, items) }));
  for (const event of events) {
    if (event.type !== 'node_cached') continue;
    const nodes = (event.data?.nodes ?? []) as { id: string; seq: number }[];
    nodes.forEach((n, i) => {
      timeline.push({ at: event.at, order: -1e6 + i, step: { node_id: n.id, seq: n.seq, status: 'cached', duration_ms: 0, cached: true, repaired: false, interrupted: false } });
    });
  }
  return timeline.sort((a, b) => a.at - b.at || a.order - b.order).map((t) => t.step);
};

const repairsOf = (versions: readonly IrVersionItem[]): ReportRepair[] =>
  versions
    .filter((v) => v.source !== 'original')
    .map((v, i) => ({
      attempt: i + 1,
      version: v.version,
      source: v.source,
      reason: v.reason ?? '',
      nodes_changed: v.nodesChanged ?? [],
      diff: v.diff ?? [],
      tokens: { input: v.usage?.input_tokens ?? 0, output: v.usage?.output_tokens ?? 0 },
      cost_usd: v.usage?.cost_usd ?? 0,
    }));

export const buildRunReport = (run: RunItem, steps: readonly NodeRecord[], events: readonly RunEvent[], versions: readonly IrVersionItem[]): RunReport => {
  const m = run.metrics;
  return {
    success: run.status === 'succeeded',
    status: run.status,
    run_id: run.runId,
    workflow: run.workflowName,
    ...(run.workflowVersion === undefined ? {} : { workflow_version: run.workflowVersion }),
    result: run.outputs ?? {},
    errors: (run.status === 'failed' || run.status === 'cancelled' || run.status === 'interrupted') && run.lastError ? [run.lastError] : [],
    warnings: run.warnings,
    repairs: repairsOf(versions),
    steps: orderedSteps(steps, events),
    ...(run.current && run.status === 'running' ? { current: { node_id: run.current.nodeId, seq: run.current.seq, started_at: new Date(run.current.startedAt).toISOString() } } : {}),
    metrics: {
      duration_ms: run.updatedAt - run.createdAt,
      nodes_executed: m.nodesExecuted,
      nodes_cached: m.nodesCached,
      llm: { input_tokens: m.llmInputTokens, output_tokens: m.llmOutputTokens, cost_usd: m.llmCostUsd },
      repair: { input_tokens: m.repairInputTokens, output_tokens: m.repairOutputTokens, cost_usd: m.repairCostUsd },
      total_cost_usd: m.llmCostUsd + m.repairCostUsd,
    },
  };
};

/** Every step record of a run: its own items and those the run item still carries, by seq. */
export const recordsOfRun = async (store: RunStore, run: RunItem): Promise<NodeRecord[]> => {
  const listed = await store.listRecords(run.runId);
  const written = new Set(listed.map((s) => s.seq));
  return [...listed, ...run.pendingRecords.filter((s) => !written.has(s.seq))].sort((a, b) => a.seq - b.seq);
};

/** Every workflow version of a run, the original first. */
export const irVersionsOfRun = async (store: RunStore, run: RunItem): Promise<IrVersionItem[]> => {
  const versions = await Promise.all(Array.from({ length: run.irVersion + 1 }, (_, v) => store.getIrVersion(run.runId, v)));
  return versions.filter((v): v is IrVersionItem => v !== undefined);
};

/** Reads everything a report needs from the store. */
export const loadRunReport = async (store: RunStore, runId: string): Promise<RunReport | undefined> => {
  const run = await store.getRun(runId);
  if (!run) return undefined;
  const [steps, events, versions] = await Promise.all([recordsOfRun(store, run), store.listEvents(runId), irVersionsOfRun(store, run)]);
  return buildRunReport(run, steps, events, versions);
};
