import type { Advance } from './advance.ts';
import { batchCacheKey, latestBatchAttempt } from './batch/batch-step.ts';
import { computeCacheKey } from './cache-key.ts';
import { nextNodeId, startNodeId, type Workflow } from './ir.ts';
import type { NodeRecord, RunError } from './run-model.ts';
import { clearPath, setLatest, setVisits } from './run-path.ts';
import type { AdvanceOutcome } from './state-io.ts';
import { TemplateResolutionError } from './templates.ts';

const position = (nodeId: string, visit: number): string => `${nodeId}#${visit}`;

/**
 * A record the walk may replay: a completed or warning visit, or a failed one that an `error` edge routed on
 * (its failure chose the way, like a loop's exit check). A failed node with no `error` edge runs again.
 */
const isReplayable = (step: NodeRecord, ir: Workflow): boolean =>
  !step.retried &&
  (step.status === 'completed' || step.status === 'warning' || (step.status === 'failed' && nextNodeId(ir, step.nodeId, 'error') !== undefined));

/** The newest record at each position (node, visit) that can be replayed. */
const replayableByPosition = (steps: readonly NodeRecord[], ir: Workflow): Map<string, NodeRecord> => {
  const byPosition = new Map<string, NodeRecord>();
  for (const step of steps) {
    // Batch items are replayed by their batch (batch/batch-step.ts), not as positions of the path.
    if (step.item || !isReplayable(step, ir)) continue;
    const key = position(step.nodeId, step.visit);
    const seen = byPosition.get(key);
    if (!seen || seen.seq < step.seq) byPosition.set(key, step);
  }
  return byPosition;
};

const warningOf = (record: NodeRecord): RunError => ({
  node_id: record.nodeId,
  category: 'non_repairable',
  code: record.error?.code ?? 'WARNING',
  message: record.error?.message ?? `node '${record.nodeId}' ended with a warning`,
  fixable: false,
});

/**
 * Walks the workflow from its start after a resume or a repair (DESIGN section 4), inside one engine
 * call: a node whose recorded visit has the same cache key is replayed (its recorded action routes on);
 * the first node without one runs. A completed node with side effects whose key changed is blocked.
 */
export const walkFromStart = async (step: Advance): Promise<AdvanceOutcome> => {
  const { run, ir } = step;
  // What a resume's patch check listed before its claim (EngineCache.takeListing), else the store's listing.
  const listed = step.deps.cache.takeListing(run.runId, run.rev) ?? (await step.deps.store.listRecords(run.runId));
  const written = new Set(listed.map((s) => s.seq));
  // Records the run item carries that never reached their own items (the process stopped first).
  const unwritten = run.pendingRecords.filter((s) => !written.has(s.seq));
  if (unwritten.length > 0) await step.deps.store.putRecords(unwritten);
  run.pendingRecords = [];
  run.flushedThrough = run.seq;
  const all = [...listed, ...unwritten];
  const records = replayableByPosition(all, ir);
  // Tries of a node's `retry` already used at a position: a resume goes on with the next one.
  const tries = new Map<string, number>();
  for (const r of all) if (r.retried) tries.set(position(r.nodeId, r.visit), Math.max(tries.get(position(r.nodeId, r.visit)) ?? 0, r.attempt ?? 1));
  // The iteration a loop node's next visit runs (after a replayed iteration that went on).
  const iterations = new Map<string, number>();
  const inFlight = run.current;
  const nodes: Record<string, Record<string, unknown>> = {};
  clearPath(run);
  run.needsWalk = false;
  delete run.current;
  delete run.cursor;
  delete run.batch;
  const replayed: { id: string; seq: number; type: string }[] = [];
  const flushReplayed = () => {
    if (replayed.length === 0) return;
    step.writes.event('node_cached', { data: { nodes: replayed.splice(0) } });
  };

  // A run repaired before its first node (it did not validate) starts here.
  if (run.seq === 0) step.writes.event('run_started', { message: `${ir.nodes.length} nodes` });
  let nodeId = startNodeId(ir);
  // Each replay consumes one recorded position, so the walk ends within records.size + 1 turns.
  for (let turn = 0; turn <= records.size; turn += 1) {
    const node = step.node(nodeId);
    const visit = (run.visits[nodeId] ?? 0) + 1;
    const record = records.get(position(nodeId, visit));
    let cacheKey: string | undefined;
    const iteration = node.loop ? (iterations.get(nodeId) ?? 1) : undefined;
    if (record) {
      try {
        cacheKey = node.batch ? batchCacheKey(step, node, nodes) : computeCacheKey(node.type, step.runnerParams(node, nodes, undefined, iteration));
      } catch (error) {
        if (!(error instanceof TemplateResolutionError)) throw error;
      }
    }
    if (!record || record.cacheKey !== cacheKey) {
      flushReplayed();
      // A batch's frozen rule is per item (nextChunk): its unchanged items replay, a changed completed one blocks.
      if (record?.sideEffects && record.status === 'completed' && !record.batch) {
        return step.fail({
          node_id: nodeId,
          category: 'non_repairable',
          code: 'SIDE_EFFECT_BLOCKED',
          message: `node '${nodeId}' has side effects and already ran with other params; flowmend will not run it twice. Keep its params (and the upstream outputs it uses) unchanged, or start a new run.`,
          fixable: false,
          details: { recordedCacheKey: record.cacheKey, ...(cacheKey ? { newCacheKey: cacheKey } : {}) },
        });
      }
      const interrupted = inFlight?.nodeId === nodeId && inFlight.visit === visit;
      if (interrupted)
        step.writes.event('node_interrupted', { nodeId, seq: inFlight.seq, message: `'${nodeId}' was running when its process stopped; running it again` });
      const previousBatch = node.batch ? latestBatchAttempt(all, nodeId, visit) : undefined;
      const used = tries.get(position(nodeId, visit));
      return step.prepare(nodeId, {
        nodes,
        interrupted,
        ...(previousBatch ? { previousBatch } : {}),
        ...(iteration !== undefined ? { iteration } : {}),
        ...(used !== undefined ? { retry: { visit, attempt: used + 1, waitS: undefined } } : {}),
      });
    }
    nodes[nodeId] = record.outputs ?? {};
    if (record.status === 'failed') step.failed.add(nodeId);
    else step.failed.delete(nodeId);
    setLatest(run, nodeId, record.seq);
    setVisits(run, nodeId, visit);
    run.metrics.nodesCached += 1;
    replayed.push({ id: nodeId, seq: record.seq, type: record.nodeType });
    const action = record.action ?? 'default';
    // A loop iteration that went on leads to the node's next iteration, not along an edge.
    if (record.loopContinued) {
      iterations.set(nodeId, (record.iteration ?? 1) + 1);
      continue;
    }
    iterations.delete(nodeId);
    const next = nextNodeId(ir, nodeId, action);
    if (next === undefined) {
      flushReplayed();
      return step.route(nodeId, action, record.status === 'warning' ? warningOf(record) : undefined);
    }
    nodeId = next;
  }
  flushReplayed();
  return step.prepare(nodeId, { nodes });
};
