import { createHash } from 'node:crypto';
import type { Advance } from '../advance.ts';
import { canonicalJson } from '../cache-key.ts';
import { StaleRunError } from '../errors.ts';
import { prepareInputs } from '../inputs.ts';
import type { Workflow } from '../ir.ts';
import { parseWorkflow } from '../parse-workflow.ts';
import { createRun } from '../run-lifecycle.ts';
import type { ParentLink, RunItem } from '../run-model.ts';
import type { AdvanceInput, AdvanceOutcome } from '../state-io.ts';
import { childRunTrace, resumeRunTrace, visitSpanId } from '../trace-context.ts';
import { formatIssues } from '../validation-issue.ts';
import { type ChildEnd, childEnd, type ItemSlot, recordItemChild, recordWorkflowNode } from './parent-hop.ts';
import { STORAGE_MODE_REFUSALS, WorkflowParamsSchema } from './workflow-params.ts';

/**
 * The child run of one visit of a workflow node: the same id every time the parent reaches that visit,
 * so a resumed parent finds (and resumes) the child it started instead of starting another. Readable
 * prefix (the root run), hashed rest (the path), within the 64 characters a run id may have.
 */
export const childRunId = (parent: RunItem, nodeId: string, visit: number, index?: number): string => {
  // A child's id ends in `-c` and hex (no dash): its root is what comes before the last `-c`.
  const root = parent.parent ? parent.runId.slice(0, parent.runId.lastIndexOf('-c')) : parent.runId;
  // One item of a batch over a workflow node: the same id for that item on every attempt of the batch's visit.
  const at = index === undefined ? `${parent.runId}/${nodeId}/${visit}` : `${parent.runId}/${nodeId}/${visit}/${index}`;
  const path = createHash('sha256').update(at).digest('hex').slice(0, 12);
  return `${root.slice(0, 48)}-c${path}`;
};

/** What the engine does after this Advance instead of returning to the state machine. */
const hopTo = (step: Advance, input: AdvanceInput): AdvanceOutcome => {
  step.hop = input;
  // Never reaches the state machine: advanceRun follows `hop` and returns what the next run decides.
  return { kind: 'continue', runId: step.run.runId, owner: step.owner };
};

/** Where a child run's end is recorded in the parent: a workflow node's visit, or one item of a batch over the node (`slot`). */
export interface ChildAt {
  nodeId: string;
  visit: number;
  seq: number;
  childId: string;
  slot?: ItemSlot | undefined;
}

/** Ends the workflow node (or its item) without a child run, or with one that already ended: recorded like any node outcome. */
const endChild = async (step: Advance, at: ChildAt, end: ChildEnd): Promise<AdvanceOutcome> => {
  await step.writes.commit({ flushAll: false });
  const { runId } = step.run;
  return hopTo(step, at.slot ? recordItemChild(runId, step.owner, at.nodeId, at.slot, end) : recordWorkflowNode(runId, step.owner, at.seq, at.nodeId, end));
};

/** Identifies the child IR a parent's workflow node holds, so that a change by a repair or a patch of the parent shows. */
const irKey = (ir: Workflow): string => createHash('sha256').update(canonicalJson(ir)).digest('hex').slice(0, 32);

/**
 * A repair or a patch of the parent that changed its workflow node's child IR: the child adopts it as
 * its next version (its walk then replays what still matches and blocks a changed side effect). A child
 * whose parent's copy did not change keeps its own versions (its own repairs).
 */
const adoptParentsChange = async (step: Advance, child: RunItem, ir: Workflow, key: string, now: number): Promise<void> => {
  if (child.parent?.irKey === undefined || child.parent.irKey === key) return;
  const version = child.irVersion + 1;
  await step.deps.store.putIrVersion({
    runId: child.runId,
    version,
    ir,
    source: 'manual',
    reason: `the parent run ${step.run.runId} changed its node '${child.parent.nodeId}' (its workflow version ${step.run.irVersion})`,
    createdAt: now,
  });
  child.irVersion = version;
};

/**
 * Takes a child over for a resumed parent: it runs again under the parent's owner and walks from its
 * start (replaying its completed nodes, re-running its failed or interrupted one). Conditional on its
 * previous owner, as `claimRun` is.
 */
const takeOver = async (step: Advance, child: RunItem, link: ParentLink, params: Record<string, unknown>, ir: Workflow): Promise<void> => {
  const previous = child.owner?.id;
  const now = step.deps.now();
  await adoptParentsChange(step, child, ir, link.irKey ?? '', now);
  const resumedFrom = child.status;
  const parentTrace = step.run.trace;
  const seq = step.run.current?.seq ?? link.seq;
  if (parentTrace) {
    // The child's next stretch, linked to the parent's node visit that took it over.
    const caller = { traceId: parentTrace.traceId, spanId: visitSpanId(step.run.runId, seq), sampled: parentTrace.sampled };
    child.trace = child.trace
      ? resumeRunTrace(
          child.trace,
          { until: child.updatedAt, open: resumedFrom === 'running' },
          { caller, traced: true, now, ...(step.deps.ids ? { ids: step.deps.ids } : {}) },
        )
      : childRunTrace(parentTrace, step.run.runId, seq, now, step.deps.ids);
  }
  child.status = 'running';
  child.needsWalk = true;
  child.parent = link;
  // A repaired parent may map other values in: the child's walk then sees them in its cache keys (and blocks a side effect that would change).
  child.params = params;
  // The parent's resume may have turned memo reads off or on (`resume --no-cache` / `--cache`).
  if (step.run.noCache) child.noCache = true;
  else delete child.noCache;
  if (step.run.owner) child.owner = step.run.owner;
  child.updatedAt = now;
  delete child.outputs;
  const key = String(child.eventSeq).padStart(8, '0');
  child.eventSeq += 1;
  await step.deps.store.appendEvents([
    { runId: child.runId, key, at: now, type: 'run_resumed', message: `resumed from ${resumedFrom} by its parent ${link.runId}` },
  ]);
  await step.deps.store.putRun(child, previous === undefined ? { seq: child.seq } : { ownerId: previous });
};

/**
 * Advance reached a workflow node (its visit is `run.current`, its params resolved): start its child run,
 * or find the one an earlier execution started, and go on advancing the child in this same call. The
 * parent waits with the node in flight; when the child ends, `parentHop` records the node.
 */
export const enterChild = (step: Advance, resolved: Record<string, unknown>): Promise<AdvanceOutcome> => {
  const current = step.run.current;
  if (!current) throw new StaleRunError(`run ${step.run.runId} has no workflow node in flight`);
  const { nodeId, visit, seq } = current;
  return startChildAt(step, resolved, { nodeId, visit, seq, childId: childRunId(step.run, nodeId, visit) });
};

/** Starts (or takes over, or records the end of) the child run at `at`, and hops down into it in this same call. */
export const startChildAt = async (step: Advance, resolved: Record<string, unknown>, at: ChildAt): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  const endWithout = (end: ChildEnd): Promise<AdvanceOutcome> => endChild(step, at, end);
  const parsed = WorkflowParamsSchema.safeParse(resolved);
  if (!parsed.success) {
    const message = parsed.error.issues.map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ');
    return endWithout({ kind: 'failed', code: 'PARAMS_INVALID', message: `workflow node '${at.nodeId}': ${message}` });
  }
  const p = parsed.data;
  const refusal = STORAGE_MODE_REFUSALS[p.storage_mode];
  if (refusal) return endWithout({ kind: 'fatal', code: 'StorageModeUnsupported', message: `storage_mode '${p.storage_mode}': ${refusal}` });
  const depth = (run.parent?.depth ?? 0) + 1;
  const limit = Math.min(p.max_depth, run.parent?.limit ?? p.max_depth);
  if (depth > limit) {
    return endWithout({
      kind: 'fatal',
      code: 'NestingTooDeep',
      message: `node '${at.nodeId}' would start a child run at nesting depth ${depth}, past the max_depth ${limit} (its own, or the smallest above it); flatten the nesting or raise max_depth (at most 100)`,
    });
  }
  if (!p.workflow_ir) {
    return endWithout({
      kind: 'fatal',
      code: 'WorkflowNotResolved',
      message: `node '${at.nodeId}': ${p.workflow_ref ?? p.workflow_name ?? 'its child'} was not resolved to a workflow by the host that started the run`,
    });
  }
  const child = parseWorkflow(p.workflow_ir);
  if (!child.ok)
    return endWithout({
      kind: 'fatal',
      code: 'ChildWorkflowInvalid',
      message: `the child workflow of node '${at.nodeId}' does not parse:\n${formatIssues(child.issues)}`,
    });
  const inputs = prepareInputs(child.workflow, p.param_mapping);
  if (!inputs.ok) {
    return endWithout({
      kind: 'failed',
      code: 'PARAM_MAPPING_INVALID',
      message: `param_mapping of node '${at.nodeId}': ${inputs.problems.map((q) => q.message).join('; ')}`,
    });
  }
  const { childId, slot } = at;
  const link: ParentLink = {
    runId: run.runId,
    nodeId: at.nodeId,
    seq: at.seq,
    ...(slot ? { item: slot.item, cacheKey: slot.cacheKey } : {}),
    depth,
    limit,
    irKey: irKey(child.workflow),
    errorAction: p.error_action,
    ...(p.output_mapping ? { outputMapping: p.output_mapping } : {}),
  };
  const existing = await deps.store.getRun(childId);
  if (existing?.status === 'succeeded') {
    // The child ended but the parent's record of it was lost with the process: record it now, run nothing.
    return endWithout(childEnd(existing, link));
  }
  if (existing) await takeOver(step, existing, link, inputs.params, child.workflow);
  else {
    if (!run.owner) throw new StaleRunError(`run ${run.runId} has no owner`);
    await createRun(deps.store, {
      runId: childId,
      workflow: child.workflow,
      workflowName: `${run.workflowName}/${at.nodeId}${slot ? `[${slot.item.index}]` : ''}`,
      params: inputs.params,
      owner: run.owner,
      repairEnabled: run.repairEnabled,
      ...(run.noCache ? { noCache: true } : {}),
      maxRepairs: run.maxRepairs,
      mode: run.mode,
      ...(run.workspace === undefined ? {} : { workspace: run.workspace }),
      parent: link,
      ...(run.trace ? { trace: childRunTrace(run.trace, run.runId, at.seq, deps.now(), deps.ids) } : {}),
      now: deps.now(),
    });
  }
  const children = run.children ?? [];
  if (!children.some((c) => c.runId === childId))
    run.children = [...children, { nodeId: at.nodeId, visit: at.visit, runId: childId, ...(slot ? { index: slot.item.index } : {}) }];
  // A cancel of the parent finds the item's child here (a batch has no node in flight).
  if (slot && run.batch) run.batch.child = childId;
  await step.writes.commit({ flushAll: false });
  return hopTo(step, { kind: 'start', runId: childId, owner: step.owner });
};
