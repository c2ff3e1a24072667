import { randomBytes } from 'node:crypto';
import { type BlobStore, uploadTargetFor } from './blob-store.ts';
import { computeCacheKey } from './cache-key.ts';
import { errorSignature } from './error-signature.ts';
import { InvalidInputError, StaleRunError } from './errors.ts';
import { DEFAULT_LIMITS, LIMIT_VARIABLES, type Limits } from './limits.ts';
import { nextNodeId, type Workflow, type WorkflowNode } from './ir.ts';
import type { NodeCatalog } from './node-type.ts';
import type { RunError, RunEvent, RunEventType, RunItem, NodeRecord } from './run-model.ts';
import type { RunStore } from './run-store.ts';
import type { ExecCounters, AdvanceOutcome } from './state-io.ts';
import { recallOutputs, rememberOutputs, rememberRun } from './engine-cache.ts';
import { findTemplates, resolveParams, resolveValue, TemplateResolutionError, type TemplateContext } from './templates.ts';

/** Node types whose runner takes the workflow's classification rules (under `__classification`). */
const RULE_AWARE_TYPES = new Set(['http']);

/** Limits of one execution; past them the run continues as a new execution of the same run. */
export interface ExecutionLimits {
  maxAdvances: number;
  maxMs: number;
}

export interface EngineDeps {
  store: RunStore;
  /** Where large node outputs go; without it runners return every output inline. */
  blobs?: BlobStore;
  catalog: NodeCatalog;
  now: () => number;
  executionLimits?: ExecutionLimits;
  /**
   * How many step records the run item carries before they are written as their own items. 1 (the
   * default, for AWS) writes each record beside the run item; more saves requests where a request is
   * slow and capacity is free (the embedded store), at the price of a larger run item.
   */
  stepBatch?: number;
  /** Node visits and events one run may make (default: DEFAULT_LIMITS). */
  runLimits?: Pick<Limits, 'maxNodeVisits' | 'maxEvents'>;
}

type NodeOutputs = Record<string, Record<string, unknown>>;

/** Largest step record (serialised) kept in the run item: beyond it, a second write costs less than a bigger run item. */
const EMBEDDED_STEP_LIMIT = 8_192;
/** Pending records are written out once they take this much of the run item (DynamoDB items stop at 400 KB). */
const PENDING_BYTES_LIMIT = 64 * 1024;

export interface PrepareOptions {
  /** Outputs of the nodes on the path, when the caller already has them (the replay walk). */
  nodes?: NodeOutputs;
  interrupted?: boolean;
}

/**
 * One Advance call: the run item as read, the changes to write, and the events to append.
 * `commit` writes events first, then the run item (conditional on the owner: the commit point),
 * which carries the records of the last nodes until they are written out as their own items.
 */
export class Advance {
  private readonly events: RunEvent[] = [];

  constructor(
    readonly run: RunItem,
    public ir: Workflow,
    readonly deps: EngineDeps,
    readonly owner: string,
    readonly exec: ExecCounters,
  ) {}

  node(nodeId: string): WorkflowNode {
    const node = this.ir.nodes.find((n) => n.id === nodeId);
    if (!node) throw new InvalidInputError(`workflow version ${this.run.irVersion} has no node '${nodeId}'`);
    return node;
  }

  event(type: RunEventType, fields: Partial<Pick<RunEvent, 'nodeId' | 'seq' | 'message' | 'data'>> = {}): void {
    const key = String(this.run.eventSeq).padStart(8, '0');
    this.run.eventSeq += 1;
    this.events.push({ runId: this.run.runId, key, at: this.deps.now(), type, ...fields });
  }

  /** Outputs of the nodes a node's templates name, read from their latest records on the path. */
  async referencedOutputs(value: unknown): Promise<NodeOutputs> {
    const seqs = new Set<number>();
    for (const ref of findTemplates(value)) {
      const seq = this.run.latest[ref.root];
      if (seq !== undefined) seqs.add(seq);
    }
    if (seqs.size === 0) return {};
    const outputs: NodeOutputs = {};
    const missing: number[] = [];
    const pending = new Map(this.run.pendingRecords.map((r) => [r.seq, r]));
    for (const seq of seqs) {
      const known = pending.get(seq) ?? recallOutputs(this.run.runId, seq);
      if (known) outputs[known.nodeId] = known.outputs ?? {};
      else missing.push(seq);
    }
    if (missing.length > 0) {
      for (const r of await this.deps.store.getRecords(this.run.runId, missing)) {
        rememberOutputs(r);
        outputs[r.nodeId] = r.outputs ?? {};
      }
    }
    return outputs;
  }

  context(nodes: NodeOutputs): TemplateContext {
    return { inputs: this.run.params, nodes };
  }

  /** Goes to the node that `action` leads to from `from`, or ends the run. */
  async route(from: string, action: string, failure?: RunError): Promise<AdvanceOutcome> {
    this.run.cursor = { nodeId: from, action };
    const to = nextNodeId(this.ir, from, action);
    if (to === undefined) {
      if (action === 'error') {
        return this.fail(
          failure ?? {
            node_id: from,
            category: 'execution_failure',
            code: 'ERROR_ACTION',
            message: `node '${from}' took action 'error' and has no 'error' edge`,
            fixable: false,
          },
        );
      }
      return this.finish();
    }
    return this.prepare(to);
  }

  /** Resolves a node's params and hands it to RunNode; a template that does not resolve fails the node before it runs. */
  async prepare(nodeId: string, options: PrepareOptions = {}): Promise<AdvanceOutcome> {
    const node = this.node(nodeId);
    const spec = this.deps.catalog.get(node.type);
    if (!spec) {
      return this.fail({ node_id: nodeId, category: 'validation', code: 'UNKNOWN_NODE_TYPE', message: `node '${nodeId}' has unknown type '${node.type}'`, fixable: true });
    }
    const visit = (this.run.visits[nodeId] ?? 0) + 1;
    const overLimit = this.runLimitReached(nodeId, visit);
    if (overLimit) return this.fail(overLimit);
    const nodes = options.nodes ?? (await this.referencedOutputs(node.params));
    let params: Record<string, unknown>;
    try {
      params = resolveParams(node.params, this.context(nodes), spec.templateQuoting?.(node.params));
    } catch (error) {
      if (!(error instanceof TemplateResolutionError)) throw error;
      return this.templateFailure(node, visit, error);
    }
    if (this.ir.classification && RULE_AWARE_TYPES.has(node.type)) params.__classification = this.ir.classification;
    const timeoutS = spec.timeoutS(params);
    if (this.mustContinueBefore(timeoutS)) {
      this.event('execution_continued', { nodeId, message: `continuing as a new execution after ${this.exec.advances} steps` });
      // Without a cursor (right after a walk) the next execution must walk again to find its place.
      if (!this.run.cursor) this.run.needsWalk = true;
      await this.commit();
      return { kind: 'continue', runId: this.run.runId, owner: this.owner };
    }
    const cacheKey = computeCacheKey(node.type, params);
    const seq = this.run.seq + 1;
    this.run.seq = seq;
    this.run.visits[nodeId] = visit;
    this.run.current = {
      seq,
      nodeId,
      nodeType: node.type,
      visit,
      cacheKey,
      sideEffects: node.side_effects ?? spec.sideEffects(params),
      startedAt: this.deps.now(),
      ...(options.interrupted ? { interrupted: true } : {}),
      ...(this.run.repairedNodes.includes(nodeId) ? { repaired: true } : {}),
    };
    await this.commit({ flushAll: false });
    return {
      kind: 'run',
      runId: this.run.runId,
      owner: this.owner,
      exec: this.exec,
      seq,
      node: {
        id: nodeId, type: node.type, params, cacheKey, timeoutS,
        ...(this.deps.blobs ? { upload: await uploadTargetFor(this.deps.blobs, this.run.runId, seq) } : {}),
      },
    };
  }

  /** A run that has used its node visits or its events stops with a clear, non-repairable error. */
  private runLimitReached(nodeId: string, visit: number): RunError | undefined {
    const limits = this.deps.runLimits ?? DEFAULT_LIMITS;
    const stop = (code: string, message: string): RunError => ({ node_id: nodeId, category: 'non_repairable', code, message, fixable: false, details: { visit } });
    if (this.run.seq >= limits.maxNodeVisits) {
      return stop('NODE_VISIT_LIMIT', `the run stopped before visit ${visit} of node '${nodeId}': it has made ${this.run.seq} node visits, the limit (${LIMIT_VARIABLES.maxNodeVisits}=${limits.maxNodeVisits}). A cycle with no exit? Give the loop an edge out of it, or raise the limit`);
    }
    if (this.run.eventSeq >= limits.maxEvents) {
      return stop('EVENT_LIMIT', `the run stopped before visit ${visit} of node '${nodeId}': it has written ${this.run.eventSeq} events, the limit (${LIMIT_VARIABLES.maxEvents}=${limits.maxEvents})`);
    }
    return undefined;
  }

  /**
   * Whether to hand over to a new execution before dispatching a node: too many steps for the
   * execution history (both kinds), or the node may not finish within the execution's time (Express).
   * An execution always dispatches at least one node, so a run cannot continue forever.
   */
  private mustContinueBefore(timeoutS: number): boolean {
    const limits = this.deps.executionLimits;
    if (!limits || this.exec.advances <= 1) return false;
    if (this.exec.advances >= limits.maxAdvances) return true;
    // Only Express executions have a time limit; a Standard one may run for a year.
    if (this.run.mode === 'standard') return false;
    return this.deps.now() - this.exec.startedAt + timeoutS * 1000 > limits.maxMs;
  }

  private async templateFailure(node: WorkflowNode, visit: number, error: TemplateResolutionError): Promise<AdvanceOutcome> {
    const seq = this.run.seq + 1;
    const now = this.deps.now();
    this.run.seq = seq;
    this.run.visits[node.id] = visit;
    const nodeError = { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
    await this.stageRecord({
      runId: this.run.runId, seq, nodeId: node.id, nodeType: node.type, visit, status: 'failed', cacheKey: '',
      sideEffects: false, irVersion: this.run.irVersion, action: 'error', error: nodeError, startedAt: now, finishedAt: now, durationMs: 0,
    });
    const runError: RunError = { node_id: node.id, category: 'template', code: error.code, message: error.message, fixable: true, ...(error.details ? { details: error.details } : {}) };
    return this.afterError(node.id, runError);
  }

  /** A repairable error: its `error` edge if the node has one, else repair, else fail. */
  async afterError(nodeId: string, error: RunError): Promise<AdvanceOutcome> {
    if (nextNodeId(this.ir, nodeId, 'error') !== undefined) return this.route(nodeId, 'error', error);
    return this.repairOrFail(error);
  }

  async repairOrFail(error: RunError): Promise<AdvanceOutcome> {
    const run = this.run;
    run.lastError = error;
    if (!error.fixable || !run.repairEnabled) return this.fail(error);
    const signature = errorSignature(error);
    if (run.repairAttempts > 0 && signature === run.lastErrorSignature) {
      return this.fail({ ...error, message: `${error.message}\n(the same error came back after repair attempt ${run.repairAttempts}; giving up)`, details: { ...error.details, repairAttempts: run.repairAttempts } });
    }
    if (run.repairAttempts >= run.maxRepairs) {
      const tried = run.maxRepairs === 0 ? 'repair is limited to 0 attempts' : `gave up after ${run.repairAttempts} repair attempt(s)`;
      return this.fail({ ...error, message: `${error.message}\n(${tried})`, details: { ...error.details, repairAttempts: run.repairAttempts } });
    }
    run.repairAttempts += 1;
    run.lastErrorSignature = signature;
    this.event('repair_started', { ...(error.node_id ? { nodeId: error.node_id } : {}), message: error.message, data: { attempt: run.repairAttempts, max: run.maxRepairs } });
    await this.commit();
    return { kind: 'repair', runId: run.runId, owner: this.owner, exec: this.exec, failedNode: error.node_id ?? '', attempt: run.repairAttempts };
  }

  async fail(error: RunError): Promise<AdvanceOutcome> {
    this.run.status = 'failed';
    this.run.lastError = error;
    delete this.run.current;
    this.event('run_failed', { ...(error.node_id ? { nodeId: error.node_id } : {}), message: error.message });
    await this.commit();
    return { kind: 'failed', runId: this.run.runId, owner: this.owner, exec: this.exec, error };
  }

  /** The end of the path: resolves the declared outputs (or takes the last node's) and completes the run. */
  async finish(): Promise<AdvanceOutcome> {
    const declared = Object.entries(this.ir.outputs);
    let outputs: Record<string, unknown>;
    if (declared.length > 0) {
      const sources = Object.fromEntries(declared.map(([name, spec]) => [name, spec.source]));
      try {
        outputs = resolveValue(sources, this.context(await this.referencedOutputs(sources))) as Record<string, unknown>;
      } catch (error) {
        if (!(error instanceof TemplateResolutionError)) throw error;
        return this.fail({ category: 'template', code: error.code, message: `workflow outputs: ${error.message}`, fixable: false, ...(error.details ? { details: error.details } : {}) });
      }
    } else {
      const lastNode = this.run.cursor?.nodeId;
      outputs = lastNode === undefined ? {} : ((await this.referencedOutputs(`\${${lastNode}}`))[lastNode] ?? {});
    }
    this.run.status = 'succeeded';
    this.run.outputs = outputs;
    delete this.run.current;
    this.event('run_succeeded');
    await this.commit();
    return { kind: 'done', runId: this.run.runId, owner: this.owner, exec: this.exec };
  }

  /**
   * Records a node's result. A small record goes into the run item, written by `commit`; a large one
   * is written first, as its own item.
   */
  async stageRecord(record: NodeRecord): Promise<void> {
    if (JSON.stringify(record).length <= EMBEDDED_STEP_LIMIT) {
      this.run.pendingRecords.push(record);
      rememberOutputs(record);
      return;
    }
    await this.putRecord(record);
  }

  /** Writes a step record once; a retried call that finds its own record already there goes on. */
  async putRecord(record: NodeRecord): Promise<void> {
    try {
      await this.deps.store.putRecord(record, null);
      rememberOutputs(record);
    } catch (error) {
      if (!(error instanceof StaleRunError)) throw error;
      const [existing] = await this.deps.store.getRecords(record.runId, [record.seq]);
      if (!existing || existing.nodeId !== record.nodeId || existing.cacheKey !== record.cacheKey) throw error;
    }
  }

  /**
   * Writes the step: events, then the run item (conditional on the owner: the commit point) and,
   * beside it, pending records due for their own items. Those stay in the run item until the next
   * commit, so a record lost between the two writes is still there for the walk of a later resume.
   * `flushAll: false` (a node is dispatched, the run stays on the hot path) lets records accumulate.
   */
  async commit(options: { flushAll?: boolean } = {}): Promise<void> {
    if (this.events.length > 0) await this.deps.store.appendEvents(this.events.splice(0));
    const run = this.run;
    // What the last commit wrote out is in its own items now: that call returned before this one began.
    run.pendingRecords = run.pendingRecords.filter((r) => r.seq > run.flushedThrough);
    const due =
      run.pendingRecords.length > 0 &&
      (options.flushAll !== false ||
        run.pendingRecords.length >= (this.deps.stepBatch ?? 1) ||
        JSON.stringify(run.pendingRecords).length > PENDING_BYTES_LIMIT);
    const written = due ? [...run.pendingRecords] : [];
    if (due) run.flushedThrough = Math.max(...written.map((r) => r.seq));
    run.updatedAt = this.deps.now();
    run.rev = randomBytes(6).toString('hex');
    await Promise.all([written.length > 0 ? this.deps.store.putRecords(written) : undefined, this.deps.store.putRun(run, { ownerId: this.owner })]);
    rememberRun(run);
  }
}
