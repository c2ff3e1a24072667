import type { ItemRange } from './batch/batch-state.ts';
import { batchTemplates, startBatch } from './batch/batch-step.ts';
import { blobUrlTtlS, MAX_INLINE_PARAMS_BYTES, paramsBlobKey, uploadTargetFor, utf8Length } from './blob-store.ts';
import { bindInputs } from './bound-inputs.ts';
import { computeCacheKey } from './cache-key.ts';
import { recordNode } from './engine.ts';
import type { EngineDeps } from './engine-deps.ts';
import { InvalidInputError } from './errors.ts';
import { mustContinueBefore, runnerWorstCaseS } from './execution-limits.ts';
import { FILE_NODE_TYPES } from './file-node-types.ts';
import { admitNode, underFlowControl } from './flow/flow-step.ts';
import { nextNodeId, nodeById, type Workflow, type WorkflowNode } from './ir.ts';
import { DEFAULT_LIMITS, LIMIT_VARIABLES } from './limits.ts';
import { MCP_TYPE } from './mcp-servers.ts';
import { memoHit } from './memo-step.ts';
import { enterChild } from './nested/child-run.ts';
import { templatedParams, WORKFLOW_TYPE } from './nested/workflow-params.ts';
import { Redactor } from './redactor.ts';
import { startRepairAttempt } from './repair/repair-loop.ts';
import type { RunError, RunItem } from './run-model.ts';
import { setVisits } from './run-path.ts';
import type { AdvanceInput, AdvanceOutcome, ExecCounters } from './state-io.ts';
import { findTemplates, resolveParams, resolveValue, type TemplateContext, TemplateResolutionError } from './templates.ts';
import { visitTraceparent } from './trace-context.ts';
import { UnitOfWork } from './unit-of-work.ts';
import type { CallbackConfig } from './waits/callback-token.ts';
import { callbackValues } from './waits/callback-values.ts';
import { pauseForApproval, startWait } from './waits/start-wait.ts';
import { isWaitType } from './waits/wait-nodes.ts';

type NodeOutputs = Record<string, Record<string, unknown>>;

/** A batch node's worst case for its run's slot lease: a chunk of items runs within one Express execution's 5 minutes. */
const BATCH_CHUNK_WORST_S = 300;

export interface PrepareOptions {
  /** Outputs of the nodes on the path, when the caller already has them (the replay walk). */
  nodes?: NodeOutputs;
  interrupted?: boolean;
  /** Where the last attempt of this batch node kept its items (the replay walk finds it). */
  previousBatch?: ItemRange;
  /** The loop iteration this visit runs (a node with `loop`; 1 when absent). */
  iteration?: number;
  /** Another try of the node's visit in flight (its `retry`): the same visit, after `waitS` seconds. */
  retry?: { visit: number; attempt: number; waitS: number | undefined };
  /** A person approved the node's gate for this visit (waits/continue-wait.ts). */
  approved?: boolean;
  /** Settles the visit instead of running the node, once it is in flight at `seq` (a denied gate records its failure). */
  settle?: (seq: number) => Promise<AdvanceOutcome>;
  /** The start this visit reserved in its rate window before the run paused for it (flow/flow-step.ts): it is not reserved again. */
  rateReservedAt?: number;
}

/**
 * One Advance call's decisions: where the run goes next (route, prepare, repair or fail, finish).
 * What it writes goes through `writes` (unit-of-work.ts), committed once per call.
 */
export class Advance {
  /** What this call writes; `commit` on it is the commit point. */
  readonly writes: UnitOfWork;
  /** Set when this call hands over to another run of the same execution (a child run, or its parent): advanceRun goes on with it. */
  hop: AdvanceInput | undefined;
  /** Nodes read this call whose latest visit failed (absent to a `??` chain, as in pflow). */
  readonly failed = new Set<string>();
  /** The host's callback key and URL, loaded by advanceRun when the workflow has a wait-for-event node (waits/callback-values.ts). */
  callbacks: CallbackConfig | undefined;
  /** Concurrency slots this call is done with (a recorded node's): given back after its commit (flow/flow-step.ts `settleFlow`). */
  readonly releases: NonNullable<RunItem['holds']> = [];
  /** Callback tokens this call put into params: kept out of what a person is shown. */
  private readonly minted = new Set<string>();

  constructor(
    readonly run: RunItem,
    public ir: Workflow,
    readonly deps: EngineDeps,
    readonly owner: string,
    readonly exec: ExecCounters,
  ) {
    this.writes = new UnitOfWork(run, deps, owner);
    this.hop = undefined;
    this.callbacks = undefined;
  }

  node(nodeId: string): WorkflowNode {
    const node = nodeById(this.ir, nodeId);
    if (!node) throw new InvalidInputError(`workflow version ${this.run.irVersion} has no node '${nodeId}'`);
    return node;
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
      const known = pending.get(seq) ?? this.deps.cache.recallOutputs(this.run.runId, seq);
      if (known) {
        outputs[known.nodeId] = known.outputs ?? {};
        if ('status' in known && known.status === 'failed') this.failed.add(known.nodeId);
        else this.failed.delete(known.nodeId);
      } else missing.push(seq);
    }
    if (missing.length > 0) {
      for (const r of await this.deps.store.getRecords(this.run.runId, missing)) {
        this.deps.cache.rememberOutputs(r);
        outputs[r.nodeId] = r.outputs ?? {};
        if (r.status === 'failed') this.failed.add(r.nodeId);
        else this.failed.delete(r.nodeId);
      }
    }
    return outputs;
  }

  context(nodes: NodeOutputs): TemplateContext {
    return { inputs: this.run.params, nodes, failed: this.failed };
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
      return this.fail({
        node_id: nodeId,
        category: 'validation',
        code: 'UNKNOWN_NODE_TYPE',
        message: `node '${nodeId}' has unknown type '${node.type}'`,
        fixable: true,
      });
    }
    const visit = options.retry?.visit ?? (this.run.visits[nodeId] ?? 0) + 1;
    const overLimit = this.runLimitReached(nodeId, visit);
    if (overLimit) return this.fail(overLimit);
    const nodes = options.nodes ?? (await this.referencedOutputs(node.batch ? batchTemplates(node) : [templatedParams(node), node.loop]));
    if (node.batch) {
      // The run's own slot before a batch node (whose items run in the execution's Map, up to Express's 5 minutes a chunk).
      if ((this.ir.concurrency || this.ir.singleton) && underFlowControl(this, node)) {
        const admitted = await admitNode(
          this,
          { ...node, concurrency: undefined, rate_limit: undefined },
          this.context(nodes),
          BATCH_CHUNK_WORST_S,
          options,
          () => true,
        );
        if (admitted.kind === 'stop') return admitted.outcome;
      }
      return startBatch(this, node, nodes, visit, options.previousBatch);
    }
    const iteration = node.loop ? (options.iteration ?? 1) : undefined;
    let params: Record<string, unknown>;
    try {
      params = this.runnerParams(node, nodes, this.context(nodes), iteration);
    } catch (error) {
      if (!(error instanceof TemplateResolutionError)) throw error;
      return this.templateFailure(node, visit, error);
    }
    // A gate asks before each visit (each loop iteration, as pflow's does), not again before a retry's next try.
    const gated = node.approval === 'required' && !options.approved && !options.retry && !this.run.autoApprove?.includes(nodeId);
    if (gated) return pauseForApproval(this, node, params, iteration);
    const timeoutS = spec.timeoutS(params);
    const waitS = options.retry?.waitS;
    // An answered gate goes on in the execution that claimed the run (it has all its time): continuing first would lose the answer.
    const answered = options.approved === true || options.settle !== undefined;
    if (!answered && mustContinueBefore(this.deps.executionLimits, this.exec, this.run.mode, this.deps.now(), runnerWorstCaseS(timeoutS) + (waitS ?? 0))) {
      this.writes.event('execution_continued', { nodeId, message: `continuing as a new execution after ${this.exec.advances} steps` });
      // Without a cursor (right after a walk) the next execution must walk again to find its place.
      if (!this.run.cursor) this.run.needsWalk = true;
      await this.writes.commit();
      return { kind: 'continue', runId: this.run.runId, owner: this.owner };
    }
    // Flow control: the run's and the node's slots, the node's start in its rate window (a delay or a pause).
    let startAt: number | undefined;
    if (!options.settle && underFlowControl(this, node)) {
      // A start later than this execution can wait for (Express's 5 minutes) pauses the run until then instead.
      const fits = (delayMs: number): boolean =>
        !mustContinueBefore(this.deps.executionLimits, this.exec, this.run.mode, this.deps.now(), runnerWorstCaseS(timeoutS) + delayMs / 1000);
      const admitted = await admitNode(this, node, this.context(nodes), timeoutS, options, fits);
      if (admitted.kind === 'stop') return admitted.outcome;
      startAt = admitted.startAt;
    }
    const cacheKey = computeCacheKey(node.type, params);
    const seq = this.run.seq + 1;
    this.run.seq = seq;
    setVisits(this.run, nodeId, visit);
    this.run.current = {
      seq,
      nodeId,
      nodeType: node.type,
      visit,
      cacheKey,
      sideEffects: node.side_effects ?? spec.sideEffects(params),
      // A node a rate limit delays starts at its reserved start: the wait before it is flow control's (metrics.flow);
      // a retried try starts after its wait (a cancel before then finds it not started).
      startedAt: startAt ?? this.deps.now() + (waitS ?? 0) * 1000,
      ...(options.interrupted ? { interrupted: true } : {}),
      ...(this.run.repairedNodes.includes(nodeId) ? { repaired: true } : {}),
      ...(iteration !== undefined ? { iteration } : {}),
      ...(options.retry ? { attempt: options.retry.attempt } : {}),
    };
    if (options.settle) return options.settle(seq);
    // The engine runs a workflow node itself, as a child run driven by this same execution.
    if (node.type === WORKFLOW_TYPE) return enterChild(this, params);
    if (isWaitType(node.type)) return startWait(this, node, params, recordNode);
    // Another run's result for the same type and resolved params (pflow's memo cache): recorded in this call, nothing runs.
    const memo = await memoHit(this, node, this.run.current);
    if (memo) {
      this.run.current.fromMemo = true;
      await this.writes.commit({ flushAll: false });
      this.hop = memo;
      return { kind: 'continue', runId: this.run.runId, owner: this.owner };
    }
    // Params that may have grown with upstream outputs travel by reference, never in the state payload.
    const blobs = this.deps.blobs;
    const body = JSON.stringify(params);
    const byReference = blobs !== undefined && utf8Length(body) > MAX_INLINE_PARAMS_BYTES;
    const paramsRef = byReference ? await blobs.put(paramsBlobKey(this.run.runId, seq), body) : undefined;
    await this.writes.commit({ flushAll: false });
    // A rate limit's start (which counts a retry's wait in) goes to a Wait state until that instant; else a retry's wait.
    const wait =
      startAt !== undefined && startAt > this.deps.now() ? { waitUntil: new Date(startAt).toISOString() } : waitS !== undefined ? { waitS } : undefined;
    return {
      kind: 'run',
      runId: this.run.runId,
      owner: this.owner,
      // A wait is followed by CheckRun, an engine call of its own: it counts as a step of the execution's history.
      exec: wait ? { ...this.exec, advances: this.exec.advances + 1 } : this.exec,
      seq,
      ...wait,
      node: {
        id: nodeId,
        type: node.type,
        params: paramsRef ? {} : params,
        cacheKey,
        timeoutS,
        ...(this.ir.classification && spec.capabilities?.classificationRules ? { classification: this.ir.classification } : {}),
        ...(blobs ? { upload: await uploadTargetFor(blobs, this.run.runId, seq, blobUrlTtlS(timeoutS)) } : {}),
        ...(blobs && paramsRef ? { paramsRef: { ref: paramsRef, url: await blobs.downloadUrl(paramsRef.key, blobUrlTtlS(timeoutS)) } } : {}),
        ...(this.run.trace ? { traceparent: visitTraceparent(this.run.trace, this.run.runId, seq) } : {}),
      },
    };
  }

  /** A run that has used its node visits or its events stops with a clear, non-repairable error. */
  private runLimitReached(nodeId: string, visit: number): RunError | undefined {
    const limits = this.deps.runLimits ?? DEFAULT_LIMITS;
    const stop = (code: string, message: string): RunError => ({
      node_id: nodeId,
      category: 'non_repairable',
      code,
      message,
      fixable: false,
      details: { visit },
    });
    // Batch items have seqs of their own (run.itemRecords) and their own limit (batch/batch-step.ts).
    const visits = this.run.seq - (this.run.itemRecords ?? 0);
    if (visits >= limits.maxNodeVisits) {
      return stop(
        'NODE_VISIT_LIMIT',
        `the run stopped before visit ${visit} of node '${nodeId}': it has made ${visits} node visits, the limit (${LIMIT_VARIABLES.maxNodeVisits}=${limits.maxNodeVisits}). A cycle with no exit? Give the loop an edge out of it, or raise the limit`,
      );
    }
    if (this.run.eventSeq >= limits.maxEvents) {
      return stop(
        'EVENT_LIMIT',
        `the run stopped before visit ${visit} of node '${nodeId}': it has written ${this.run.eventSeq} events, the limit (${LIMIT_VARIABLES.maxEvents}=${limits.maxEvents})`,
      );
    }
    return undefined;
  }

  /**
   * A node's params as its runner gets them (and as its cache key sees them, in prepare and in the
   * walk alike): templates resolved (quoted for the shell where the node type says so), then host configuration the node does not carry itself. The
   * MCP server (secrets stay `${VAR}` references, expanded by the runner) and the run's workspace.
   * Throws TemplateResolutionError.
   */
  runnerParams(node: WorkflowNode, nodes: NodeOutputs, context: TemplateContext = this.context(nodes), iteration = 1): Record<string, unknown> {
    const spec = this.deps.catalog.get(node.type);
    // pflow's `inputs:` on any node, a loop's carried inputs and `${__iteration__}`; a wait-for-event node's callback URL.
    const bound = bindInputs(node, templatedParams(node), spec, callbackValues(this, templatedParams(node), context), iteration);
    const params = resolveParams(bound.params, bound.context, spec?.templateQuoting?.(node.params));
    // A child workflow's own templates are the child's: they go to it as written.
    if (node.type === WORKFLOW_TYPE && node.params.workflow_ir !== undefined) params.workflow_ir = node.params.workflow_ir;
    if (node.type === MCP_TYPE && typeof params.server === 'string') {
      const server = this.ir.mcp_servers?.[params.server];
      if (server !== undefined) params.__server = server;
    }
    // A shell command runs in the run's workspace too, whichever process (and whose cwd) drives the run.
    const readsFiles =
      FILE_NODE_TYPES.has(node.type) || node.type === 'shell' || (node.type === 'llm' && Array.isArray(params.images) && params.images.length > 0);
    if (readsFiles && this.run.workspace !== undefined) params.__workspace = this.run.workspace;
    return params;
  }

  /** Remembers a callback token put into params, so that `redactCallbacks` keeps it out of what a person is shown. */
  noteMinted(token: string): void {
    this.minted.add(token);
  }

  redactCallbacks<T>(value: T): T {
    return this.minted.size === 0 ? value : new Redactor(this.minted).value(value);
  }

  async templateFailure(node: WorkflowNode, visit: number, error: TemplateResolutionError): Promise<AdvanceOutcome> {
    const seq = this.run.seq + 1;
    const now = this.deps.now();
    this.run.seq = seq;
    setVisits(this.run, node.id, visit);
    const nodeError = { code: error.code, message: error.message, ...(error.details ? { details: error.details } : {}) };
    await this.writes.stageRecord({
      runId: this.run.runId,
      seq,
      nodeId: node.id,
      nodeType: node.type,
      visit,
      status: 'failed',
      cacheKey: '',
      sideEffects: false,
      irVersion: this.run.irVersion,
      action: 'error',
      error: nodeError,
      startedAt: now,
      finishedAt: now,
      durationMs: 0,
    });
    const runError: RunError = {
      node_id: node.id,
      category: 'template',
      code: error.code,
      message: error.message,
      fixable: true,
      ...(error.details ? { details: error.details } : {}),
    };
    return this.afterError(node.id, runError);
  }

  /** A repairable error: its `error` edge if the node has one, else repair, else fail. */
  async afterError(nodeId: string, error: RunError): Promise<AdvanceOutcome> {
    if (nextNodeId(this.ir, nodeId, 'error') !== undefined) return this.route(nodeId, 'error', error);
    return this.repairOrFail(error);
  }

  /** Repair or fail: the repair loop's guards (repair/repair-loop.ts). */
  repairOrFail(error: RunError): Promise<AdvanceOutcome> {
    return startRepairAttempt(this, error);
  }

  async fail(error: RunError): Promise<AdvanceOutcome> {
    this.run.status = 'failed';
    this.run.lastError = error;
    delete this.run.current;
    this.writes.event('run_failed', {
      ...(error.node_id ? { nodeId: error.node_id } : {}),
      message: error.message,
      data: { category: error.category, code: error.code },
    });
    await this.writes.commit();
    return { kind: 'failed', runId: this.run.runId, owner: this.owner, exec: this.exec, error };
  }

  /**
   * Stops the run `interrupted` (resumable, as after a dead execution) when the node in flight could not
   * run at all: nothing was recorded, so a resume runs it as if for the first time.
   */
  async interrupt(error: RunError): Promise<AdvanceOutcome> {
    this.run.status = 'interrupted';
    this.run.lastError = error;
    delete this.run.current;
    this.writes.event('run_interrupted', { ...(error.node_id ? { nodeId: error.node_id } : {}), message: `${error.code}: ${error.message}` });
    await this.writes.commit();
    return { kind: 'failed', runId: this.run.runId, owner: this.owner, exec: this.exec, error };
  }

  /** The end of the path: resolves the declared outputs (or takes the last node's) and completes the run. */
  async finish(): Promise<AdvanceOutcome> {
    const declared = Object.entries(this.ir.outputs);
    let outputs: Record<string, unknown>;
    if (declared.length > 0) {
      const sources: Record<string, string> = {};
      for (const [name, spec] of declared) sources[name] = spec.source ?? (await this.lastWriterOf(name));
      try {
        outputs = resolveValue(sources, this.context(await this.referencedOutputs(sources))) as Record<string, unknown>;
      } catch (error) {
        if (!(error instanceof TemplateResolutionError)) throw error;
        return this.fail({
          category: 'template',
          code: error.code,
          message: `workflow outputs: ${error.message}`,
          fixable: false,
          ...(error.details ? { details: error.details } : {}),
        });
      }
    } else {
      const lastNode = this.run.cursor?.nodeId;
      outputs = lastNode === undefined ? {} : ((await this.referencedOutputs(`\${${lastNode}}`))[lastNode] ?? {});
    }
    this.run.status = 'succeeded';
    this.run.outputs = outputs;
    delete this.run.current;
    this.writes.event('run_succeeded', {});
    await this.writes.commit();
    return { kind: 'done', runId: this.run.runId, owner: this.owner, exec: this.exec };
  }

  /**
   * pflow's outputs without `source`: the key of that name from the node on the path that wrote it
   * last, as a template (so a missing key fails like any output). Read once, at the end of a run.
   */
  private async lastWriterOf(key: string): Promise<string> {
    const byLatest = Object.entries(this.run.latest).sort(([, a], [, b]) => b - a);
    const outputs = await this.referencedOutputs(byLatest.map(([nodeId]) => `\${${nodeId}}`));
    const writer = byLatest.find(([nodeId]) => Object.hasOwn(outputs[nodeId] ?? {}, key))?.[0];
    return writer === undefined ? `\${${key}}` : `\${${writer}.${key}}`;
  }
}
