import { boundValue } from './bound-value.ts';
import type { Workflow } from './ir.ts';
import type { ErrorCategory, IrVersionItem, NodeRecord, RunEvent, RunItem } from './run-model.ts';
import { buildRunReport, irVersionsOfRun, type RunReport, recordsOfRun } from './run-report.ts';
import type { RunStore } from './run-store.ts';

/** What the viewer colours a node by: its latest visit, or why it has none. */
export type NodeViewStatus = 'completed' | 'replayed' | 'running' | 'waiting' | 'failed' | 'warning' | 'interrupted' | 'pending' | 'skipped';

export interface ViewNodeError {
  code: string;
  message: string;
  category?: ErrorCategory;
}

export interface ViewNode {
  id: string;
  type: string;
  status: NodeViewStatus;
  /** Visits on the run's path (a node in a loop has more than one). */
  visits: number;
  /** The latest visit's seq, action and duration (0 for a replayed visit). */
  seq?: number;
  action?: string;
  duration_ms?: number;
  /** Time spent executing this node across all its visits, replays excluded. */
  total_duration_ms: number;
  outputs?: unknown;
  error?: ViewNodeError;
  /** Changed by a repair of this run. */
  repaired: boolean;
  /** A workflow node's child runs, one per visit in visit order: the page links each to its own page. */
  child_runs?: string[];
}

export interface ViewEdge {
  from: string;
  to: string;
  action: string;
  /** How many visits of `from` left by this edge. */
  taken: number;
}

export interface ViewVersion {
  version: number;
  source: IrVersionItem['source'];
  reason: string;
  created_at: string;
  nodes_changed: string[];
  diff: string[];
  tokens: { input: number; output: number };
  cost_usd: number;
  /** A version the run did not adopt: a repair that waits for a person's approval, or one a person rejected. */
  state?: 'held' | 'rejected';
}

/** Everything the run page draws, in one read: the report plus the graph and the workflow's versions. */
export interface RunView {
  run_id: string;
  /** Changes whenever the run does: the page waits for it to change (long-poll). */
  change: string;
  report: RunReport;
  graph: { start_node: string; nodes: ViewNode[]; edges: ViewEdge[] };
  versions: ViewVersion[];
}

/** One look at a node: a recorded visit, or a replay of one. */
interface Sighting {
  at: number;
  order: number;
  record: NodeRecord;
  replayed: boolean;
}

const sightingsOf = (steps: readonly NodeRecord[], events: readonly RunEvent[]): Sighting[] => {
  const bySeq = new Map(steps.map((s) => [s.seq, s]));
  const sightings: Sighting[] = steps.map((record) => ({ at: record.startedAt, order: record.seq, record, replayed: false }));
  for (const event of events) {
    if (event.type !== 'node_cached') continue;
    const nodes = (event.data?.nodes ?? []) as { id: string; seq: number }[];
    nodes.forEach((n, i) => {
      const record = bySeq.get(n.seq);
      if (record) sightings.push({ at: event.at, order: -1e6 + i, record, replayed: true });
    });
  }
  return sightings.sort((a, b) => a.at - b.at || a.order - b.order);
};

/** The category of each node's latest classified error: the run's errors and warnings, and each repair's cause. */
const categoriesOf = (run: RunItem, events: readonly RunEvent[]): Map<string, ErrorCategory> => {
  const categories = new Map<string, ErrorCategory>();
  for (const event of events) {
    if ((event.type === 'repair_started' || event.type === 'run_failed') && event.nodeId && event.data?.category)
      categories.set(event.nodeId, event.data.category);
  }
  for (const w of run.warnings) if (w.node_id) categories.set(w.node_id, w.category);
  if (run.lastError?.node_id) categories.set(run.lastError.node_id, run.lastError.category);
  return categories;
};

const statusOf = (latest: Sighting | undefined, run: RunItem): NodeViewStatus => {
  if (!latest) return run.status === 'running' || run.status === 'waiting' ? 'pending' : 'skipped';
  if (latest.replayed) return 'replayed';
  const status = latest.record.status;
  // A record left 'running' by a run that is no longer running was cut off.
  return status === 'running' && run.status !== 'running' ? 'interrupted' : status;
};

const nodesOf = (ir: Workflow, run: RunItem, sightings: readonly Sighting[], events: readonly RunEvent[]): ViewNode[] => {
  const categories = categoriesOf(run, events);
  return ir.nodes.map((node) => {
    const mine = sightings.filter((s) => s.record.nodeId === node.id);
    const latest = mine.at(-1);
    const executed = mine.filter((s) => !s.replayed);
    const running = run.status === 'running' && run.current?.nodeId === node.id;
    // The node a time, an event or a gate holds (a held repair's node keeps its failure: the panel says the rest).
    const waiting = run.status === 'waiting' && run.wait?.kind !== 'repair-approval' && run.wait?.nodeId === node.id;
    const record = latest?.record;
    const view: ViewNode = {
      id: node.id,
      type: node.type,
      status: running ? 'running' : waiting ? 'waiting' : statusOf(latest, run),
      visits: Math.max(0, ...mine.map((s) => s.record.visit)),
      total_duration_ms: Math.round(executed.reduce((sum, s) => sum + (s.record.durationMs ?? 0), 0) * 10) / 10,
      repaired: run.repairedNodes.includes(node.id),
    };
    if (record) {
      view.seq = record.seq;
      if (record.action) view.action = record.action;
      view.duration_ms = latest.replayed ? 0 : Math.round((record.durationMs ?? 0) * 10) / 10;
      if (record.outputs) view.outputs = boundValue(record.outputs);
      if (record.error && (record.status === 'failed' || record.status === 'warning' || record.status === 'interrupted')) {
        const category = categories.get(node.id);
        view.error = { code: record.error.code, message: boundValue(record.error.message) as string, ...(category ? { category } : {}) };
      }
    }
    return view;
  });
};

/** Edges of the current workflow with how often each was taken: one count per visit, by that visit's latest action. */
const edgesOf = (ir: Workflow, sightings: readonly Sighting[]): ViewEdge[] => {
  const actionOfVisit = new Map<string, { nodeId: string; action: string }>();
  for (const s of sightings) {
    if (s.record.action) actionOfVisit.set(`${s.record.nodeId}#${s.record.visit}`, { nodeId: s.record.nodeId, action: s.record.action });
  }
  const taken = new Map<string, number>();
  for (const { nodeId, action } of actionOfVisit.values()) taken.set(`${nodeId}\u0000${action}`, (taken.get(`${nodeId}\u0000${action}`) ?? 0) + 1);
  return ir.edges.map((e) => ({ from: e.from, to: e.to, action: e.action, taken: taken.get(`${e.from}\u0000${e.action}`) ?? 0 }));
};

const versionOf = (run: RunItem, v: IrVersionItem): ViewVersion => ({
  version: v.version,
  source: v.source,
  reason: v.reason ?? (v.source === 'original' ? 'the workflow as started' : ''),
  created_at: new Date(v.createdAt).toISOString(),
  nodes_changed: v.nodesChanged ?? [],
  diff: v.diff ?? [],
  tokens: { input: v.usage?.input_tokens ?? 0, output: v.usage?.output_tokens ?? 0 },
  cost_usd: v.usage?.cost_usd ?? 0,
  ...(v.version > run.irVersion ? { state: run.repairs.find((r) => r.version === v.version)?.outcome === 'held' ? 'held' : 'rejected' } : {}),
});

/** A token that differs after any write of the run (its rev, time and event count). */
export const changeOf = (run: RunItem): string => `${run.rev ?? ''}:${run.updatedAt}:${run.eventSeq}:${run.status}`;

export const buildRunView = (run: RunItem, steps: readonly NodeRecord[], events: readonly RunEvent[], versions: readonly IrVersionItem[]): RunView => {
  const current = versions.find((v) => v.version === run.irVersion) ?? versions.at(-1);
  if (!current) throw new Error(`run ${run.runId} has no workflow version`);
  const ir = current.ir;
  // Batch items show inside their batch's step (the report), not as visits of the graph's nodes.
  const sightings = sightingsOf(
    steps.filter((s) => !s.item),
    events,
  );
  const report = buildRunReport(run, steps, events, versions);
  return {
    run_id: run.runId,
    change: changeOf(run),
    report: { ...report, result: boundValue(report.result) as Record<string, unknown> },
    graph: {
      start_node: ir.start_node ?? ir.nodes[0]?.id ?? '',
      nodes: withChildRuns(nodesOf(ir, run, sightings, events), run),
      edges: edgesOf(ir, sightings),
    },
    versions: versions.map((v) => versionOf(run, v)),
  };
};

/** Each workflow node with the child runs it started (from the run item's child references). */
const withChildRuns = (nodes: ViewNode[], run: RunItem): ViewNode[] => {
  const byNode = new Map<string, { visit: number; runId: string }[]>();
  for (const c of run.children ?? []) byNode.set(c.nodeId, [...(byNode.get(c.nodeId) ?? []), c]);
  return nodes.map((n) => {
    const children = byNode.get(n.id);
    return children ? { ...n, child_runs: [...children].sort((a, b) => a.visit - b.visit).map((c) => c.runId) } : n;
  });
};

/** Reads everything the run page needs from the store; undefined when there is no such run. */
export const loadRunView = async (store: RunStore, runId: string): Promise<RunView | undefined> => {
  const run = await store.getRun(runId);
  if (!run) return undefined;
  const [steps, events, versions] = await Promise.all([recordsOfRun(store, run), store.listEvents(runId), irVersionsOfRun(store, run)]);
  return buildRunView(run, steps, events, versions);
};
