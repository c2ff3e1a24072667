import { itemsByBatch, type ReportBatch, reportBatch } from './batch/batch-report.ts';
import { nextIrVersion } from './repair/next-version.ts';
import type { IrVersionItem, NodeRecord, NodeRecordStatus, RepairAttempt, RunError, RunEvent, RunItem, RunStatus } from './run-model.ts';
import type { RunStore } from './run-store.ts';
import { type Wait, type WaitFlow, type WaitKind, withFlow } from './waits/wait-model.ts';

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

/**
 * One repair attempt, or a person's patch (source `manual`). `applied`: a new workflow version;
 * `refused`: a proposal broke a rule (`problems`, told to the next attempt); `failed`: no proposal
 * could be made (`reason` says why).
 */
export interface ReportRepair {
  /** Position in the run's repair history, from 1. */
  attempt: number;
  outcome: RepairAttempt['outcome'];
  version?: number;
  source?: IrVersionItem['source'];
  reason: string;
  problems?: string[];
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
  /** Set on a child run: the run and workflow node it belongs to. */
  parent?: { run_id: string; node_id: string };
  /** Child runs of this run's workflow nodes, each a whole report, under the node and visit that started it. */
  children?: ChildReport[];
  /** The node that was running when the report was made (a run in progress). */
  current?: { node_id: string; seq: number; started_at: string };
  /** What a `waiting` run waits for, and until when (DESIGN 7b). */
  waiting?: ReportWait;
  metrics: {
    duration_ms: number;
    nodes_executed: number;
    nodes_cached: number;
    llm: { input_tokens: number; output_tokens: number; cost_usd: number };
    repair: { input_tokens: number; output_tokens: number; cost_usd: number };
    total_cost_usd: number;
    /** Flow control (docs/flow-control.md): how often the run waited for a slot, a rate limit or a debounce, and how long in all. */
    flow?: { waits: number; wait_ms: number };
  };
}

/** A child run in a report: the workflow node and visit that started it, and the batch item it ran when the node has a batch. */
export type ChildReport = RunReport & { node_id: string; visit: number; index?: number };

/** A waiting run's wait: a gate shows the node's resolved params (`preview`), a held repair its proposal (`repair`). */
export interface ReportWait {
  kind: WaitKind;
  wait_id: string;
  node_id?: string;
  since: string;
  until?: string;
  /** An answer already given, which an execution has yet to act on. */
  answer?: { outcome: string; at: string; by?: string };
  preview?: Record<string, unknown>;
  /** A wait of flow control (docs/flow-control.md): its key, and for a slot the limit, the holders and the run's place in line. */
  flow?: WaitFlow;
  repair?: Omit<ReportRepair, 'attempt' | 'outcome'> & { attempt: number; model?: string };
}

const withoutOutcome = ({ outcome: _, ...rest }: Omit<ReportRepair, 'attempt'>): Omit<ReportRepair, 'attempt' | 'outcome'> => rest;

const reportWait = (wait: Wait, versions: readonly IrVersionItem[]): ReportWait => {
  const held = wait.kind === 'repair-approval' ? versions.find((v) => v.version === wait.version) : undefined;
  return {
    kind: wait.kind,
    wait_id: wait.id,
    ...(wait.nodeId ? { node_id: wait.nodeId } : {}),
    since: new Date(wait.since).toISOString(),
    ...(wait.until === undefined ? {} : { until: new Date(wait.until).toISOString() }),
    ...(wait.answer
      ? { answer: { outcome: wait.answer.outcome, at: new Date(wait.answer.at).toISOString(), ...(wait.answer.by ? { by: wait.answer.by } : {}) } }
      : {}),
    ...(wait.kind === 'approval' ? { preview: wait.preview } : {}),
    ...withFlow(wait),
    ...(wait.kind === 'repair-approval' && held
      ? { repair: { attempt: wait.attempt, ...withoutOutcome(appliedVersion(held)), ...(held.usage ? { model: held.usage.model } : {}) } }
      : {}),
  };
};

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
  const timeline: { at: number; order: number; step: ReportStep }[] = steps
    .filter((s) => !s.item)
    .map((s) => ({ at: s.startedAt, order: s.seq, step: stepOf(s, items) }));
  for (const event of events) {
    if (event.type !== 'node_cached') continue;
    const nodes = (event.data?.nodes ?? []) as { id: string; seq: number }[];
    nodes.forEach((n, i) => {
      timeline.push({
        at: event.at,
        order: -1e6 + i,
        step: { node_id: n.id, seq: n.seq, status: 'cached', duration_ms: 0, cached: true, repaired: false, interrupted: false },
      });
    });
  }
  return timeline.sort((a, b) => a.at - b.at || a.order - b.order).map((t) => t.step);
};

const appliedVersion = (v: IrVersionItem): Omit<ReportRepair, 'attempt'> => ({
  outcome: 'applied',
  version: v.version,
  source: v.source,
  reason: v.reason ?? '',
  nodes_changed: v.nodesChanged ?? [],
  diff: v.diff ?? [],
  tokens: { input: v.usage?.input_tokens ?? 0, output: v.usage?.output_tokens ?? 0 },
  cost_usd: v.usage?.cost_usd ?? 0,
});

const unappliedAttempt = (a: RepairAttempt): Omit<ReportRepair, 'attempt'> => ({
  outcome: a.outcome,
  ...(a.usage ? { source: 'llm' as const } : {}),
  reason: a.reason,
  ...(a.problems ? { problems: a.problems } : {}),
  nodes_changed: [],
  diff: [],
  tokens: { input: a.usage?.input_tokens ?? 0, output: a.usage?.output_tokens ?? 0 },
  cost_usd: a.usage?.cost_usd ?? 0,
});

/**
 * Every repair attempt the run item recorded (applied ones with their version's diff), and the versions
 * no attempt wrote (a person's patches, and repairs of runs recorded before attempts were), in time order.
 */
const repairsOf = (attempts: readonly RepairAttempt[], versions: readonly IrVersionItem[]): ReportRepair[] => {
  const byVersion = new Map(versions.map((v) => [v.version, v]));
  const timeline: { at: number; repair: Omit<ReportRepair, 'attempt'> }[] = [];
  for (const a of attempts) {
    const version = a.version === undefined ? undefined : byVersion.get(a.version);
    timeline.push({
      at: a.at,
      repair: version ? { ...appliedVersion(version), outcome: a.outcome, reason: a.reason || (version.reason ?? '') } : unappliedAttempt(a),
    });
  }
  const written = new Set(attempts.flatMap((a) => (a.version === undefined ? [] : [a.version])));
  for (const v of versions) {
    if (v.source !== 'original' && !written.has(v.version)) timeline.push({ at: v.createdAt, repair: appliedVersion(v) });
  }
  return timeline.sort((a, b) => a.at - b.at).map((t, i) => ({ attempt: i + 1, ...t.repair }));
};

export const buildRunReport = (run: RunItem, steps: readonly NodeRecord[], events: readonly RunEvent[], versions: readonly IrVersionItem[]): RunReport => {
  const m = run.metrics;
  return {
    success: run.status === 'succeeded',
    status: run.status,
    run_id: run.runId,
    workflow: run.workflowName,
    ...(run.workflowVersion === undefined ? {} : { workflow_version: run.workflowVersion }),
    ...(run.parent ? { parent: { run_id: run.parent.runId, node_id: run.parent.nodeId } } : {}),
    result: run.outputs ?? {},
    errors: (run.status === 'failed' || run.status === 'cancelled' || run.status === 'interrupted') && run.lastError ? [run.lastError] : [],
    warnings: run.warnings,
    repairs: repairsOf(run.repairs, versions),
    steps: orderedSteps(steps, events),
    ...(run.wait && run.status === 'waiting' ? { waiting: reportWait(run.wait, versions) } : {}),
    ...(run.current && run.status === 'running'
      ? { current: { node_id: run.current.nodeId, seq: run.current.seq, started_at: new Date(run.current.startedAt).toISOString() } }
      : {}),
    metrics: {
      duration_ms: run.updatedAt - run.createdAt,
      nodes_executed: m.nodesExecuted,
      nodes_cached: m.nodesCached,
      llm: { input_tokens: m.llmInputTokens, output_tokens: m.llmOutputTokens, cost_usd: m.llmCostUsd },
      repair: { input_tokens: m.repairInputTokens, output_tokens: m.repairOutputTokens, cost_usd: m.repairCostUsd },
      total_cost_usd: m.llmCostUsd + m.repairCostUsd,
      ...(m.flowWaits > 0 ? { flow: { waits: m.flowWaits, wait_ms: Math.round(m.flowWaitMs) } } : {}),
    },
  };
};

/** Every step record of a run: its own items and those the run item still carries, by seq. */
export const recordsOfRun = async (store: RunStore, run: RunItem, afterSeq = 0): Promise<NodeRecord[]> =>
  withPendingRecords(await store.listRecords(run.runId, afterSeq), run, afterSeq);

/** The records a listing of the run's own items (after `afterSeq`) gave, with those the run item still carries, by seq. */
export const withPendingRecords = (listed: readonly NodeRecord[], run: RunItem, afterSeq = 0): NodeRecord[] => {
  const written = new Set(listed.map((s) => s.seq));
  const pending = run.pendingRecords.filter((s) => s.seq > afterSeq && !written.has(s.seq));
  return [...listed, ...pending].sort((a, b) => a.seq - b.seq);
};

/** Every workflow version of a run, the original first, with those it did not adopt (a held or rejected repair). */
export const irVersionsOfRun = async (store: RunStore, run: RunItem): Promise<IrVersionItem[]> => {
  const versions = await Promise.all(Array.from({ length: nextIrVersion(run) }, (_, v) => store.getIrVersion(run.runId, v)));
  return versions.filter((v): v is IrVersionItem => v !== undefined);
};

/** Reads everything a report needs from the store. */
export const loadRunReport = async (store: RunStore, runId: string): Promise<RunReport | undefined> => {
  const run = await store.getRun(runId);
  if (!run) return undefined;
  const [steps, events, versions] = await Promise.all([recordsOfRun(store, run), store.listEvents(runId), irVersionsOfRun(store, run)]);
  const report = buildRunReport(run, steps, events, versions);
  // Nesting is bounded by each workflow node's max_depth (at most 100), and each child is read once.
  const children: ChildReport[] = [];
  for (const child of run.children ?? []) {
    const nested = await loadRunReport(store, child.runId);
    if (nested) children.push({ node_id: child.nodeId, visit: child.visit, ...(child.index === undefined ? {} : { index: child.index }), ...nested });
  }
  return children.length > 0 ? { ...report, children } : report;
};
