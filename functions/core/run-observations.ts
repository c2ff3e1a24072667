import type { NodeRecord, RepairAttempt, RunError, RunEvent, RunItem, RunStatus } from './run-model.ts';

/**
 * What a run did, as observers (traces, metrics, logs) are told it: read off the writes that record it,
 * once they are durable, so the engine keeps no second trail and a host that observes nothing pays
 * nothing. Each carries the run item as written (its id, workflow, trace) and plain data.
 */
export type RunObservation =
  | { kind: 'run_created'; run: RunItem; at: number }
  | { kind: 'run_started'; run: RunItem; at: number }
  | { kind: 'run_resumed'; run: RunItem; at: number; message: string }
  /** The run stopped: it ended, or it waits for a person (failed, cancelled, interrupted) until a resume. */
  | { kind: 'run_stopped'; run: RunItem; at: number; status: Exclude<RunStatus, 'running'>; error?: RunError }
  /** One node visit, executed (or cut off by a cancel), as recorded. */
  | { kind: 'node_visited'; run: RunItem; record: NodeRecord; category?: RunError['category'] }
  /** Nodes a walk replayed from their records instead of running them. */
  | { kind: 'nodes_replayed'; run: RunItem; at: number; nodes: readonly { id: string; seq: number; type?: string | undefined }[] }
  | { kind: 'repair_started'; run: RunItem; at: number; attempt: number; nodeId?: string; category?: RunError['category']; code?: string }
  | {
      kind: 'repair_ended';
      run: RunItem;
      at: number;
      attempt: RepairAttempt;
      /** Who made the proposal: `rules` or `llm` (known for an applied one; for another, `llm` when it cost tokens). */
      source: string;
      nodesChanged: readonly string[];
    }
  | { kind: 'execution_continued'; run: RunItem; at: number; nodeId?: string }
  /** A try of a node with `retry` failed; the next starts after `waitS` seconds (the failed try is a visit of its own). */
  | { kind: 'node_retrying'; run: RunItem; at: number; nodeId: string; attempt: number; max: number; waitS: number }
  /** One step of the engine that took ENGINE_STEP_NOTED_MS or more (a long walk, a validation, slow store reads). */
  | { kind: 'engine_step'; run: RunItem; startedAt: number; at: number; replayed: number };

/** Engine steps shorter than this are not observations of their own: most take a millisecond or two, and a span each would double a trace. */
export const ENGINE_STEP_NOTED_MS = 20;

/** Told what runs do, after it is durable. Must not throw, nor block: exporting happens in the background. */
export interface RunObserver {
  observe(observations: readonly RunObservation[]): void;
}

/** A write of a run, as an observing store sees it: the run item, the events before it, the node visits it recorded. */
export interface ObservedWrite {
  run: RunItem;
  events: readonly RunEvent[];
  visits?: readonly NodeRecord[] | undefined;
  /** When the engine began the step this write commits (engine commits only). */
  step?: { startedAt: number; committedAt: number } | undefined;
  /** The write created the run. */
  created?: boolean;
}

const STOPS = { run_succeeded: 'succeeded', run_failed: 'failed', run_cancelled: 'cancelled', run_interrupted: 'interrupted' } as const;

/** How the failure of a node was filed, when the run recorded it (its last error, or a warning). */
const categoryOf = (run: RunItem, record: NodeRecord): RunError['category'] | undefined => {
  if (record.status === 'completed') return undefined;
  if (run.lastError?.node_id === record.nodeId) return run.lastError.category;
  return run.warnings.findLast((w) => w.node_id === record.nodeId)?.category;
};

/** The node a cancel cut off (run.current, marked interrupted), as the record the cancel writes for it. */
const cutOffVisit = (run: RunItem, at: number): NodeRecord | undefined => {
  const current = run.current;
  if (!current?.interrupted) return undefined;
  return {
    runId: run.runId,
    seq: current.seq,
    nodeId: current.nodeId,
    nodeType: current.nodeType,
    visit: current.visit,
    status: 'interrupted',
    cacheKey: current.cacheKey,
    sideEffects: current.sideEffects,
    irVersion: run.irVersion,
    startedAt: current.startedAt,
    finishedAt: at,
    durationMs: at - current.startedAt,
    interrupted: true,
  };
};

const fromEvent = (run: RunItem, event: RunEvent): RunObservation | undefined => {
  const at = event.at;
  switch (event.type) {
    case 'run_started':
      return { kind: 'run_started', run, at };
    case 'run_resumed':
      return { kind: 'run_resumed', run, at, message: event.message };
    case 'node_cached':
      return { kind: 'nodes_replayed', run, at, nodes: event.data.nodes };
    case 'repair_started':
      return {
        kind: 'repair_started',
        run,
        at,
        attempt: event.data.attempt,
        ...(event.nodeId === undefined ? {} : { nodeId: event.nodeId }),
        ...(event.data.category === undefined ? {} : { category: event.data.category }),
        ...(event.data.code === undefined ? {} : { code: event.data.code }),
      };
    case 'repair_applied':
    case 'repair_failed': {
      const attempt = run.repairs.findLast((a) => a.attempt === event.data.attempt);
      if (!attempt) return undefined;
      const applied = event.type === 'repair_applied';
      return {
        kind: 'repair_ended',
        run,
        at,
        attempt,
        source: applied ? event.data.source : attempt.usage ? 'llm' : 'rules',
        nodesChanged: applied ? event.data.nodesChanged : [],
      };
    }
    case 'execution_continued':
      return { kind: 'execution_continued', run, at, ...(event.nodeId === undefined ? {} : { nodeId: event.nodeId }) };
    case 'run_succeeded':
    case 'run_failed':
    case 'run_cancelled':
    case 'run_interrupted': {
      const status = STOPS[event.type];
      return { kind: 'run_stopped', run, at, status, ...(status !== 'succeeded' && run.lastError ? { error: run.lastError } : {}) };
    }
    case 'node_retrying':
      return { kind: 'node_retrying', run, at, nodeId: event.nodeId, ...event.data };
    // A wait ends the run's stretch as a stop does, and the execution that takes it up again starts the next one.
    case 'run_waiting':
      return { kind: 'run_stopped', run, at, status: 'waiting' };
    case 'run_woken':
      return { kind: 'run_resumed', run, at, message: event.message };
    case 'wait_answered':
    case 'node_interrupted':
    case 'batch_progress':
      return undefined;
  }
};

/** The observations one durable write makes: its node visits first (they happened before the events that follow them), then its events. */
export const observationsOf = (write: ObservedWrite): RunObservation[] => {
  const { run } = write;
  const out: RunObservation[] = [];
  if (write.created) out.push({ kind: 'run_created', run, at: run.createdAt });
  for (const record of write.visits ?? []) {
    const category = categoryOf(run, record);
    out.push({ kind: 'node_visited', run, record, ...(category ? { category } : {}) });
  }
  const step = write.step;
  if (step && step.committedAt - step.startedAt >= ENGINE_STEP_NOTED_MS) {
    const replayed = write.events.reduce((n, e) => n + (e.type === 'node_cached' ? e.data.nodes.length : 0), 0);
    out.push({ kind: 'engine_step', run, startedAt: step.startedAt, at: step.committedAt, replayed });
  }
  for (const event of write.events) {
    if (event.type === 'run_cancelled') {
      const cut = cutOffVisit(run, event.at);
      if (cut) out.push({ kind: 'node_visited', run, record: cut });
    }
    const observation = fromEvent(run, event);
    if (observation) out.push(observation);
  }
  return out;
};
