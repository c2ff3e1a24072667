import { Advance } from './advance.ts';
import { nextChunk } from './batch/batch-step.ts';
import { recordChunk } from './batch/record-chunk.ts';
import { settleCancelledStep } from './cancel-run.ts';
import { throttledError } from './classify.ts';
import type { EngineDeps } from './engine-deps.ts';
import { InvalidInputError, RunNotFoundError, StaleRunError } from './errors.ts';
import { failOnUnexpected } from './fail-unexpected.ts';
import { continueFlowWait } from './flow/flow-step.ts';
import { dropNodeHolds, settleFlow } from './flow/release-slots.ts';
import { debounceStart } from './flow/start-control.ts';
import { startNodeId, type Workflow } from './ir.ts';
import { rememberResult } from './memo-step.ts';
import { parentHop } from './nested/parent-hop.ts';
import { isChildIssue } from './nested/validate-children.ts';
import { classifyRunInput, nodeRecordOf } from './node-record.ts';
import type { RunnerResult } from './node-type.ts';
import { settleHeldRepair } from './repair/held-repair.ts';
import { settleRepairAttempt } from './repair/repair-loop.ts';
import { repeatAfterVisit } from './repeat-step.ts';
import { LAMBDA_THROTTLED } from './retry-policy.ts';
import type { RunError, RunItem } from './run-model.ts';
import { setLatest } from './run-path.ts';
import { type AdvanceInput, AdvanceInputSchema, type AdvanceOutcome, type ExecCounters, type TaskError } from './state-io.ts';
import { formatIssues, unconfiguredMcpServers, validateWorkflow } from './validate.ts';
import { usesCallbacks } from './waits/callback-values.ts';
import { claimWake } from './waits/claim-wake.ts';
import { continueWait } from './waits/continue-wait.ts';
import { walkFromStart } from './walk.ts';

export type { EngineDeps } from './engine-deps.ts';
export type { ExecutionLimits } from './execution-limits.ts';

const loadIr = async (deps: EngineDeps, run: RunItem): Promise<Workflow> => {
  const cached = deps.cache.recallIr(run.runId, run.irVersion);
  if (cached) return cached;
  const item = await deps.store.getIrVersion(run.runId, run.irVersion);
  if (!item) throw new InvalidInputError(`run ${run.runId} has no workflow version ${run.irVersion}`);
  deps.cache.rememberIr(run.runId, run.irVersion, item.ir);
  return item.ir;
};

const terminalOutcome = (run: RunItem, owner: string): AdvanceOutcome | undefined => {
  if (run.status === 'succeeded') return { kind: 'done', runId: run.runId, owner };
  if (run.status === 'failed') {
    const error = run.lastError ?? { category: 'execution_failure', code: 'FAILED', message: 'the run failed', fixable: false };
    return { kind: 'failed', runId: run.runId, owner, error };
  }
  return undefined;
};

/** Bounds the hops between parent and child runs in one call (each hop is one Advance of one run). */
const MAX_HOPS = 1_000;

/**
 * The engine's one step (DESIGN section 4): records what the previous state produced, decides what
 * happens next and returns it for the state machine to route on. Reads O(1) items on the normal path
 * (the run item, the cached IR version, the records its templates reference); walks from the start
 * only after a resume or a repair. A workflow node hops within the call: down into its child run
 * (the outcome then names the child), and back up into the parent when the child ends.
 */
export const advanceRun = async (rawInput: unknown, deps: EngineDeps): Promise<AdvanceOutcome> => {
  let next: unknown = rawInput;
  for (let hops = 0; ; hops += 1) {
    const { outcome, hop } = await advanceOne(next, deps);
    if (hop === undefined) return outcome;
    if (hops >= MAX_HOPS) throw new InvalidInputError(`Advance hopped between parent and child runs ${MAX_HOPS} times in one call`);
    next = hop;
  }
};

const advanceOne = async (rawInput: unknown, deps: EngineDeps): Promise<{ outcome: AdvanceOutcome; hop?: AdvanceInput | undefined }> => {
  const parsed = AdvanceInputSchema.safeParse(rawInput);
  if (!parsed.success) throw new InvalidInputError(`Advance got an input it cannot read: ${parsed.error.message}`);
  const input = parsed.data;
  let run: RunItem | undefined;
  if (input.kind === 'wake') {
    // An execution that continues a waiting run: its first step takes the run over, or ends idle.
    const claimed = await claimWake(input, deps);
    if (claimed.kind === 'idle') return { outcome: claimed.outcome };
    run = claimed.run;
  } else run = deps.cache.recallRun(input.runId, input.rev) ?? (await deps.store.getRun(input.runId));
  if (!run) throw new RunNotFoundError(`run ${input.runId} does not exist`);
  if (run.owner?.id !== input.owner) {
    // A cancel dropped the owner while this execution ran a node: it records what the node did, then ends.
    if (run.status === 'cancelled' && run.owner === undefined) return { outcome: await settleCancelledStep(run, input, deps, () => loadIr(deps, run)) };
    throw new StaleRunError(`run ${input.runId} is now owned by ${run.owner?.id ?? 'nobody'}, not ${input.owner}; this execution stops`);
  }
  // A retried call of the step that paused the run: it paused already, and the execution ends again.
  if (run.status === 'waiting' && run.wait)
    return { outcome: { kind: 'waiting', runId: run.runId, owner: input.owner, waitId: run.wait.id, waitKind: run.wait.kind } };
  const terminal = terminalOutcome(run, input.owner);
  if (terminal) return { outcome: terminal, hop: parentHop(run, input.owner, terminal) };
  const exec: ExecCounters = input.exec ? { startedAt: input.exec.startedAt, advances: input.exec.advances + 1 } : { startedAt: deps.now(), advances: 1 };
  let outcome: AdvanceOutcome;
  let step: Advance | undefined;
  try {
    step = new Advance(run, await loadIr(deps, run), deps, input.owner, exec);
    if (deps.callbacks && usesCallbacks(step)) step.callbacks = await deps.callbacks.load();
    outcome = await dispatch(step, input);
  } catch (error) {
    // The step's commit found the run cancelled under it (from another process, past this one's cached copy).
    const cancelled = error instanceof StaleRunError ? await deps.store.getRun(input.runId) : undefined;
    if (cancelled?.status === 'cancelled' && cancelled.owner === undefined) {
      return { outcome: await settleCancelledStep(cancelled, input, deps, () => loadIr(deps, cancelled)) };
    }
    const failed = await failOnUnexpected(deps.store, input.runId, input.owner, error, deps.now());
    if (!failed) throw error;
    return { outcome: failed, hop: parentHop(run, input.owner, failed) };
  }
  await settleFlow(step, outcome);
  return { outcome: run.rev === undefined ? outcome : { ...outcome, rev: run.rev }, hop: step.hop ?? parentHop(run, input.owner, outcome) };
};

const dispatch = (step: Advance, input: AdvanceInput): Promise<AdvanceOutcome> => {
  switch (input.kind) {
    case 'start':
    case 'wake':
      return start(step);
    case 'run':
      return recordNode(step, input);
    case 'batch':
      return recordChunk(step, input);
    case 'repair':
      return settleRepairAttempt(step, input);
  }
};

const start = async (step: Advance, debounced = false): Promise<AdvanceOutcome> => {
  const { run, ir } = step;
  // The run was woken from a wait (claim-wake.ts): its answer decides what comes next.
  if (run.wait?.answer) return continueWait(step, recordNode, settleHeldRepair, (s, wait) => continueFlowWait(s, wait, (again) => start(again, true)));
  // The previous execution continued here to give a repair a whole execution's time.
  if (run.repairDue) return step.repairOrFail(run.repairDue);
  // The previous execution continued in the middle of a batch: its next chunk.
  if (run.batch && !run.needsWalk) return nextChunk(step);
  // A run stopped before its first node has nothing to replay: it starts (and validates) as new.
  if (run.seq === 0) run.needsWalk = false;
  else if (run.needsWalk || run.current) return walkFromStart(step);
  if (run.cursor) return step.route(run.cursor.nodeId, run.cursor.action);
  // A child workflow's own problems are the child run's to repair (as its own version), when it starts.
  const issues = validateWorkflow(ir, step.deps.catalog).filter((i) => i.severity === 'error' && !isChildIssue(i));
  if (issues.length > 0) {
    return step.repairOrFail({
      category: 'validation',
      code: 'INVALID_WORKFLOW',
      message: `the workflow does not validate:\n${formatIssues(issues)}`,
      fixable: true,
      details: { issues },
    });
  }
  // A server is configuration, not workflow: no repair can conjure one, so the run stops before any node runs.
  const unconfigured = unconfiguredMcpServers(ir);
  if (unconfigured.length > 0) {
    const names = [...new Set(unconfigured.map((u) => u.server))];
    return step.fail({
      node_id: unconfigured[0]?.nodeId,
      category: 'validation',
      code: 'MCP_SERVER_NOT_CONFIGURED',
      message: `MCP server${names.length > 1 ? 's' : ''} ${names.map((n) => `'${n}'`).join(', ')} not configured (called by ${unconfigured.map((u) => `'${u.nodeId}'`).join(', ')}): declare ${names.length > 1 ? 'them' : 'it'} under "mcp_servers" in the workflow or in the file given by --mcp-config`,
      fixable: false,
      details: { servers: names },
    });
  }
  // A debounced workflow's new run waits out its period first (flow/start-control.ts); a later start takes its place.
  if (!debounced && run.seq === 0) {
    const paused = await debounceStart(step);
    if (paused) return paused;
  }
  step.writes.event('run_started', { message: `${ir.nodes.length} nodes` });
  return step.prepare(startNodeId(ir));
};

/**
 * Records the node in flight from its runner's `result` or a caught `error` (classified), or from a
 * `fatal` error the engine decided (a wait's timeout, a denied gate), and routes on.
 */
export const recordNode = async (
  step: Advance,
  input: { seq: number; result?: RunnerResult | undefined; error?: TaskError | undefined; fatal?: RunError },
): Promise<AdvanceOutcome> => {
  const { run, ir, deps } = step;
  const current = run.current;
  if (!current || current.seq !== input.seq) {
    // A redelivered call whose result is already recorded: the run has moved on.
    throw new StaleRunError(`run ${run.runId} is not waiting for step ${input.seq} (in flight: ${current?.seq ?? 'none'})`);
  }
  // Throttled through every retry: the runner never ran, so nothing is recorded; the run stops resumable.
  if (input.error?.Error === LAMBDA_THROTTLED) return step.interrupt(throttledError(current.nodeId, current.nodeType));
  const { result, outcome } = await classifyRunInput(deps, run, ir, current, input);
  const record = nodeRecordOf(run, current, outcome, result, deps.now());
  // The visit is over: its node's slots go back once this step is committed (a retry takes them again).
  dropNodeHolds(step);
  if (outcome.kind === 'success' && !current.fromMemo) await rememberResult(step, record);
  // pflow's node-level retry and loop: another try, or the next iteration, instead of routing on.
  const repeated = await repeatAfterVisit(step, current, record, outcome);
  if (repeated) return repeated;
  await step.writes.stageRecord(record);
  delete run.current;
  if (current.fromMemo) run.metrics.nodesCached += 1;
  else run.metrics.nodesExecuted += 1;
  if (result?.usage) {
    run.metrics.llmInputTokens += result.usage.input_tokens;
    run.metrics.llmOutputTokens += result.usage.output_tokens;
    run.metrics.llmCostUsd += result.usage.cost_usd;
  }
  if (result?.kind === 'ok') {
    for (const w of result.warnings ?? []) {
      run.warnings.push({
        node_id: record.nodeId,
        category: 'non_repairable',
        code: w.code,
        message: w.message,
        fixable: false,
        ...(w.details ? { details: w.details } : {}),
      });
    }
  }
  // Whatever the outcome, templates now read this visit (an error edge's handler reads a failed node's outputs too).
  setLatest(run, record.nodeId, record.seq);
  switch (outcome.kind) {
    case 'success':
      return step.route(record.nodeId, outcome.action);
    case 'warning':
      run.warnings.push(outcome.error);
      return step.route(record.nodeId, 'error', outcome.error);
    case 'error':
      return step.afterError(record.nodeId, outcome.error);
    case 'fatal':
      return step.route(record.nodeId, 'error', outcome.error);
  }
};
