import type { Advance } from '../advance.ts';
import { blobUrlTtlS, MAX_INLINE_PARAMS_BYTES, paramsBlobKey, uploadTargetFor, utf8Length } from '../blob-store.ts';
import { computeCacheKey } from '../cache-key.ts';
import { mustContinueBefore } from '../execution-limits.ts';
import type { WorkflowNode } from '../ir.ts';
import { DEFAULT_LIMITS, LIMIT_VARIABLES } from '../limits.ts';
import { childLimitRefusal, enterItemChild } from '../nested/batch-child.ts';
import { WORKFLOW_TYPE } from '../nested/workflow-params.ts';
import type { NodeRecord } from '../run-model.ts';
import { setVisits } from '../run-path.ts';
import type { AdvanceOutcome, BatchItemSpec } from '../state-io.ts';
import { TemplateResolutionError } from '../templates.ts';
import { visitTraceparent } from '../trace-context.ts';
import { type BatchConfig, batchWidth, configOf } from './batch-config.ts';
import { itemContext, resolveItems, withIndex } from './batch-items.ts';
import { type BatchState, countItem, type ItemOf, type ItemRange, READ_WINDOW } from './batch-state.ts';
import { finishBatch } from './finish-batch.ts';

type NodeOutputs = Record<string, Record<string, unknown>>;

/** A chunk's items travel in the state payload: kept well under the 256 KiB limit with the Map's results beside them. */
const CHUNK_PAYLOAD_BYTES = 96 * 1024;

/** The resolved params of item `index`, as its runner gets them and its cache key sees them. Throws TemplateResolutionError. */
const itemParams = (
  step: Advance,
  node: WorkflowNode,
  nodes: NodeOutputs,
  config: BatchConfig,
  items: readonly unknown[],
  index: number,
): Record<string, unknown> => {
  const context = itemContext(step.context(nodes), config, items[index], index);
  return step.runnerParams({ ...node, params: withIndex(node.params, index) as Record<string, unknown> }, nodes, context);
};

/** What a batch node's templates read: its items and its params (a nested `[${__index__}]` read as `[0]`: the same nodes). */
export const batchTemplates = (node: WorkflowNode): unknown => [node.batch?.items, withIndex(node.params, 0)];

/** Item cache keys, in order; the walk compares the batch record's key with this to replay a whole batch. */
export const batchCacheKey = (step: Advance, node: WorkflowNode, nodes: NodeOutputs): string => {
  const config = configOf(node);
  const items = resolveItems(config, step.context(nodes));
  const keys = items.map((_, index) => computeCacheKey(node.type, itemParams(step, node, nodes, config, items, index)));
  return computeCacheKey(node.type, { batchItems: keys });
};

/** The most recent attempt of a batch at a position of the path (its record carries the item range), for a new attempt to replay from. */
export const latestBatchAttempt = (records: readonly NodeRecord[], nodeId: string, visit: number): ItemRange | undefined => {
  let latest: NodeRecord | undefined;
  for (const r of records) if (r.batch && r.nodeId === nodeId && r.visit === visit && (!latest || r.seq > latest.seq)) latest = r;
  return latest?.batch;
};

/**
 * Starts a batch node (DESIGN section 3, pflow's batch): reserves one record seq per item, writes the batch's
 * own record as running (so a later attempt finds these items), and dispatches the first chunk.
 */
export const startBatch = async (
  step: Advance,
  node: WorkflowNode,
  nodes: NodeOutputs,
  visit: number,
  previous: ItemRange | undefined,
): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  const config = configOf(node);
  let items: unknown[];
  try {
    items = resolveItems(config, step.context(nodes));
  } catch (error) {
    if (!(error instanceof TemplateResolutionError)) throw error;
    return step.templateFailure(node, visit, error);
  }
  const limits = deps.runLimits ?? DEFAULT_LIMITS;
  const tooMany = (code: string, message: string): Promise<AdvanceOutcome> =>
    step.fail({ node_id: node.id, category: 'non_repairable', code, message, fixable: false, details: { items: items.length } });
  if (items.length > limits.maxBatchItems) {
    return tooMany(
      'BATCH_ITEM_LIMIT',
      `node '${node.id}' has ${items.length} batch items, over the limit (${LIMIT_VARIABLES.maxBatchItems}=${limits.maxBatchItems}); split the items or raise the limit`,
    );
  }
  const tooManyChildren = node.type === WORKFLOW_TYPE ? childLimitRefusal(node.id, items.length) : undefined;
  if (tooManyChildren) return tooMany('BATCH_ITEM_LIMIT', tooManyChildren);
  const used = run.itemRecords ?? 0;
  if (used + items.length > limits.maxItemRecords) {
    return tooMany(
      'ITEM_RECORD_LIMIT',
      `node '${node.id}' needs ${items.length} item records and the run has written ${used}, over the limit (${LIMIT_VARIABLES.maxItemRecords}=${limits.maxItemRecords})`,
    );
  }
  const spec = deps.catalog.get(node.type);
  const seq = run.seq + 1;
  const range: ItemRange = { base: seq + 1, count: items.length };
  run.seq = seq + items.length;
  run.itemRecords = used + items.length;
  setVisits(run, node.id, visit);
  const now = deps.now();
  const firstParams = items.length > 0 ? safeParams(step, node, nodes, config, items) : {};
  const batch: BatchState = {
    seq,
    nodeId: node.id,
    nodeType: node.type,
    visit,
    range,
    next: 0,
    ...(previous ? { previous } : {}),
    successCount: 0,
    errorCount: 0,
    replayedCount: 0,
    errors: [],
    cacheKey: '',
    sideEffects: node.side_effects ?? spec?.sideEffects(firstParams) ?? true,
    startedAt: now,
    ...(run.repairedNodes.includes(node.id) ? { repaired: true } : {}),
  };
  run.batch = batch;
  // The running record is what a later attempt (after a crash) reads the item range from.
  await deps.store.putRecords([
    {
      runId: run.runId,
      seq,
      nodeId: node.id,
      nodeType: node.type,
      visit,
      status: 'running',
      cacheKey: '',
      sideEffects: batch.sideEffects,
      irVersion: run.irVersion,
      startedAt: now,
      batch: batch.range,
    },
  ]);
  step.writes.event('batch_progress', { nodeId: node.id, data: { done: 0, total: items.length, failed: 0, replayed: 0 } });
  if (items.length === 0) return finishBatch(step, batch, 0);
  return nextChunk(step, { fresh: true });
};

/** The first item's params for the node type's side-effect declaration (an http node's method may be a template). */
const safeParams = (step: Advance, node: WorkflowNode, nodes: NodeOutputs, config: BatchConfig, items: readonly unknown[]): Record<string, unknown> => {
  try {
    return itemParams(step, node, nodes, config, items, 0);
  } catch {
    return {};
  }
};

/**
 * The next chunk of items (at most the batch's width): items whose previous attempt completed with the
 * same cache key are replayed by copying their records; the rest go to the RunBatch Map. A completed item
 * with side effects whose key changed is never run again: the batch is blocked, as a node is in walk.ts.
 */
export const nextChunk = async (step: Advance, options: { fresh?: boolean } = {}): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  const batch = run.batch as BatchState;
  const node = step.node(batch.nodeId);
  const config = configOf(node);
  const spec = deps.catalog.get(node.type);
  // A chunk with retries waits retry_wait before those items run: the execution must have room for both.
  const waitS = (batch.retry ?? []).length > 0 ? Math.ceil(config.retry_wait) : 0;
  if (!options.fresh && mustContinueBefore(deps.executionLimits, step.exec, run.mode, deps.now(), (spec?.timeoutS(node.params) ?? 60) + waitS)) {
    step.writes.event('execution_continued', {
      nodeId: node.id,
      message: `continuing as a new execution after ${step.exec.advances} steps, at item ${batch.next + 1} of ${batch.range.count}`,
    });
    await step.writes.commit();
    return { kind: 'continue', runId: run.runId, owner: step.owner };
  }
  const nodes = await step.referencedOutputs(batchTemplates(node));
  const items = resolveItems(config, step.context(nodes));
  // A batch over a workflow node runs one item's child run at a time (see nested/batch-child.ts).
  const width = node.type === WORKFLOW_TYPE ? 1 : batchWidth(config);
  const failFast = config.error_handling === 'fail_fast';
  const specs: BatchItemSpec[] = [];
  const written: NodeRecord[] = [];
  let bytes = 0;
  let previous = new Map<number, NodeRecord>();
  let windowEnd = -1;
  while ((batch.retry ?? []).length > 0 && specs.length < width && !(failFast && batch.errorCount > 0)) {
    const [again, ...rest] = batch.retry ?? [];
    if (!again) break;
    batch.retry = rest;
    // Its params resolved the first time; they are resolved again the same way.
    const params = itemParams(step, node, nodes, config, items, again.index);
    const item = { batchSeq: batch.seq, index: again.index, attempt: again.attempt };
    // Step Functions waits whole seconds: a fractional retry_wait is rounded up, never down to no wait.
    const waitS = Math.ceil(config.retry_wait);
    const itemSpec = await dispatchSpec(step, node, batch.range.base + again.index, params, computeCacheKey(node.type, params), item, waitS);
    specs.push(waitS > 0 ? { ...itemSpec, waitS } : itemSpec);
  }
  while (batch.next < items.length && specs.length < width && bytes < CHUNK_PAYLOAD_BYTES && !(failFast && batch.errorCount > 0)) {
    const index = batch.next;
    if (batch.previous && index > windowEnd && index < batch.previous.count) {
      windowEnd = Math.min(index + READ_WINDOW, batch.previous.count) - 1;
      const seqs = [];
      for (let i = index; i <= windowEnd; i += 1) seqs.push(batch.previous.base + i);
      previous = new Map((await deps.store.getRecords(run.runId, seqs)).map((r) => [r.seq - (batch.previous as ItemRange).base, r]));
    }
    batch.next += 1;
    const seq = batch.range.base + index;
    const item = { batchSeq: batch.seq, index };
    let params: Record<string, unknown>;
    try {
      params = itemParams(step, node, nodes, config, items, index);
    } catch (error) {
      if (!(error instanceof TemplateResolutionError)) throw error;
      const now = deps.now();
      written.push({
        runId: run.runId,
        seq,
        nodeId: node.id,
        nodeType: node.type,
        visit: 1,
        status: 'failed',
        cacheKey: '',
        sideEffects: false,
        irVersion: run.irVersion,
        action: 'error',
        error: { code: error.code, message: error.message },
        startedAt: now,
        finishedAt: now,
        durationMs: 0,
        item,
      });
      countItem(batch, index, written.at(-1));
      continue;
    }
    const cacheKey = computeCacheKey(node.type, params);
    const before = previous.get(index);
    if (before?.status === 'completed' && before.cacheKey === cacheKey) {
      written.push({ ...before, seq, item, replayed: true, irVersion: run.irVersion });
      batch.replayedCount += 1;
      countItem(batch, index, before);
      continue;
    }
    if (before?.status === 'completed' && batch.sideEffects) {
      await deps.store.putRecords(written);
      return step.fail({
        node_id: node.id,
        category: 'non_repairable',
        code: 'SIDE_EFFECT_BLOCKED',
        message: `item ${index + 1} of batch node '${node.id}' has side effects and already ran with other params; flowmend will not run it twice. Keep its params (and the upstream outputs they use) unchanged, or start a new run.`,
        fixable: false,
        details: { index, recordedCacheKey: before.cacheKey, newCacheKey: cacheKey },
      });
    }
    const itemSpec = await dispatchSpec(step, node, seq, params, cacheKey, item);
    bytes += utf8Length(JSON.stringify(itemSpec));
    specs.push(itemSpec);
  }
  // Replayed and unresolvable items are durable before the run item says they are done.
  if (written.length > 0) await deps.store.putRecords(written);
  if (specs.length === 0) {
    if (batch.next >= items.length || (failFast && batch.errorCount > 0)) return finishBatch(step, batch, items.length);
    return nextChunk(step, { fresh: true });
  }
  if (node.type === WORKFLOW_TYPE && specs[0]) return enterItemChild(step, specs[0]);
  await step.writes.commit({ flushAll: false });
  return {
    kind: 'batch',
    runId: run.runId,
    owner: step.owner,
    exec: step.exec,
    seq: batch.seq,
    nodeType: node.type,
    width: Math.min(width, specs.length),
    items: specs,
  };
};

/** What one item's runner gets: the node spec a single node would get, params by reference when large. */
const dispatchSpec = async (
  step: Advance,
  node: WorkflowNode,
  seq: number,
  params: Record<string, unknown>,
  cacheKey: string,
  item: ItemOf,
  waitS = 0,
): Promise<BatchItemSpec> => {
  const { run, deps, ir } = step;
  // A workflow item's child starts in this same call: its params never travel in a state payload.
  if (node.type === WORKFLOW_TYPE)
    return { kind: 'run', runId: run.runId, owner: step.owner, seq, item, node: { id: node.id, type: node.type, params, cacheKey, timeoutS: 1 } };
  const spec = deps.catalog.get(node.type);
  const blobs = deps.blobs;
  const timeoutS = spec?.timeoutS(params) ?? 60;
  const body = JSON.stringify(params);
  const paramsRef = blobs !== undefined && utf8Length(body) > MAX_INLINE_PARAMS_BYTES ? await blobs.put(paramsBlobKey(run.runId, seq), body) : undefined;
  return {
    kind: 'run',
    runId: run.runId,
    owner: step.owner,
    seq,
    item,
    node: {
      id: node.id,
      type: node.type,
      params: paramsRef ? {} : params,
      cacheKey,
      timeoutS,
      ...(ir.classification && spec?.capabilities?.classificationRules ? { classification: ir.classification } : {}),
      // A retried item waits its retry_wait before its runner: its URLs must outlive that wait too.
      ...(blobs ? { upload: await uploadTargetFor(blobs, run.runId, seq, blobUrlTtlS(timeoutS, waitS)) } : {}),
      ...(blobs && paramsRef ? { paramsRef: { ref: paramsRef, url: await blobs.downloadUrl(paramsRef.key, blobUrlTtlS(timeoutS, waitS)) } } : {}),
      // An item's requests are children of the batch node's visit span.
      ...(run.trace ? { traceparent: visitTraceparent(run.trace, run.runId, item.batchSeq) } : {}),
    },
  };
};
