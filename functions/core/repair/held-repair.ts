import type { Advance } from '../advance.ts';
import { InvalidInputError } from '../errors.ts';
import { DEFAULT_REPAIR_APPROVAL, type Workflow } from '../ir.ts';
import type { IrVersionItem, IrVersionSource, RepairAttempt, RunItem } from '../run-model.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import { newWaitId, pauseRun } from '../waits/pause.ts';
import type { Wait, WaitAnswer } from '../waits/wait-model.ts';
import { adoptRepair, recordAttempt } from './repair-loop.ts';

/** Whether a repair from `source` waits for a person: the run's policy, else its workflow's, else DEFAULT_REPAIR_APPROVAL. */
export const repairNeedsApproval = (run: RunItem, ir: Workflow, source: IrVersionSource): boolean => {
  const policy = run.repairApproval ?? ir.repair?.approval ?? DEFAULT_REPAIR_APPROVAL;
  return policy === 'all' || (policy === 'llm' && source === 'llm');
};

/**
 * Holds a repair's workflow version for a person (DESIGN 7b): the attempt is recorded `held` with its
 * version (whose item keeps the diff, reason, model, tokens and cost), and the run waits. Its LLM call was
 * paid for whatever the answer, so its usage counts now.
 */
export const holdRepair = (step: Advance, item: IrVersionItem, attempt: RepairAttempt): Promise<AdvanceOutcome> => {
  recordAttempt(step.run, attempt);
  return pauseRun(step, {
    kind: 'repair-approval',
    id: newWaitId(step),
    since: step.deps.now(),
    ...(attempt.nodeId ? { nodeId: attempt.nodeId } : {}),
    version: item.version,
    attempt: attempt.attempt,
  });
};

const by = (answer: WaitAnswer): string => `${answer.by ? ` by ${answer.by}` : ''}${answer.comment ? ` (${answer.comment})` : ''}`;

/**
 * A person's answer to a held repair: approved, the version is adopted and the run goes on from the failed
 * node; rejected, the run fails (non-repairable) with the proposal kept, so that a person can resume it
 * with a patch of their own (`flowmend resume <run> --workflow patched.json`).
 */
export const settleHeldRepair = async (step: Advance, wait: Extract<Wait, { kind: 'repair-approval' }>, answer: WaitAnswer): Promise<AdvanceOutcome> => {
  const { run } = step;
  const held = run.repairs.find((r) => r.version === wait.version && r.outcome === 'held');
  if (held) held.outcome = answer.outcome === 'approved' ? 'applied' : 'rejected';
  if (answer.outcome === 'approved') {
    const item = await step.deps.store.getIrVersion(run.runId, wait.version);
    if (!item) throw new InvalidInputError(`run ${run.runId} has no workflow version ${wait.version} to apply`);
    return adoptRepair(step, item, wait.attempt);
  }
  step.writes.event('repair_failed', {
    ...(wait.nodeId ? { nodeId: wait.nodeId } : {}),
    message: `repair attempt ${wait.attempt} (workflow version ${wait.version}) was rejected${by(answer)}`,
    data: { attempt: wait.attempt, outcome: 'rejected' },
  });
  const failure = run.lastError;
  return step.fail({
    ...(wait.nodeId ? { node_id: wait.nodeId } : {}),
    category: 'non_repairable',
    code: 'REPAIR_REJECTED',
    message: `the repair proposed for ${failure?.node_id ? `'${failure.node_id}'` : 'the workflow'} (workflow version ${wait.version}) was rejected${by(answer)}; the failure it was for: ${failure?.message ?? 'unknown'}. Resume with a patch of your own: flowmend resume ${run.runId} --workflow patched.json`,
    fixable: false,
    details: { rejected_version: wait.version, ...(failure ? { failure: { code: failure.code, message: failure.message } } : {}) },
  });
};
