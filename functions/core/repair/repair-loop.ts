import type { Advance } from '../advance.ts';
import { errorSignature } from '../error-signature.ts';
import { InvalidInputError, StaleRunError } from '../errors.ts';
import { mustContinueBefore, REPAIR_MAX_S, repairWorstCaseS } from '../execution-limits.ts';
import type { LlmUsage } from '../node-type.ts';
import type { IrVersionItem, RepairAttempt, RunError, RunItem } from '../run-model.ts';
import type { AdvanceInput, AdvanceOutcome } from '../state-io.ts';
import { walkFromStart } from '../walk.ts';
import { holdRepair, repairNeedsApproval } from './held-repair.ts';
import { nextIrVersion } from './next-version.ts';

type RepairInput = Extract<AdvanceInput, { kind: 'repair' }>;

/**
 * The run item (at most 400 KB on DynamoDB) carries the attempts: each is clipped to about 2 KB, and
 * only the last MAX_ATTEMPTS_KEPT are kept (a run passes maxRepairs, at most 20, only across patches).
 */
const REASON_CHARS = 600;
const PROBLEMS_KEPT = 5;
const PROBLEM_CHARS = 300;
const MAX_ATTEMPTS_KEPT = 20;
const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);
const clipProblems = (problems: readonly string[]): string[] => [
  ...problems.slice(0, PROBLEMS_KEPT).map((p) => clip(p, PROBLEM_CHARS)),
  ...(problems.length > PROBLEMS_KEPT ? [`… and ${problems.length - PROBLEMS_KEPT} more`] : []),
];

export const recordAttempt = (run: RunItem, attempt: RepairAttempt): void => {
  run.repairs.push(attempt);
  if (run.repairs.length > MAX_ATTEMPTS_KEPT) run.repairs.splice(0, run.repairs.length - MAX_ATTEMPTS_KEPT);
};

const addRepairUsage = (run: RunItem, usage: LlmUsage | undefined): void => {
  if (!usage) return;
  run.metrics.repairInputTokens += usage.input_tokens;
  run.metrics.repairOutputTokens += usage.output_tokens;
  run.metrics.repairCostUsd += usage.cost_usd;
};

const giveUp = (step: Advance, error: RunError, why: string): Promise<AdvanceOutcome> =>
  step.fail({ ...error, message: `${error.message}\n(${why})`, details: { ...error.details, repairAttempts: step.run.repairAttempts } });

/**
 * Repair or fail (DESIGN section 5): no repair for an unfixable error or with repair off; give up
 * when the error a repair was applied for comes back unchanged, or when `maxRepairs` attempts are
 * spent; continue as a new execution first when this one has no time left for a repair. Otherwise
 * the next attempt goes to the Repair state.
 */
export const startRepairAttempt = async (step: Advance, error: RunError): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  run.lastError = error;
  if (!error.fixable || !run.repairEnabled) return step.fail(error);
  const signature = errorSignature(error);
  const last = run.repairs.at(-1);
  // Only a rerun after an applied repair can bring the error "back": a refused or failed attempt changed nothing.
  if (last?.outcome === 'applied' && last.attempt === run.repairAttempts && signature === run.lastErrorSignature) {
    return giveUp(step, error, `the same error came back after repair attempt ${run.repairAttempts}; giving up`);
  }
  if (run.repairAttempts >= run.maxRepairs) {
    const refused = last?.outcome === 'refused' && last.attempt === run.repairAttempts ? `; attempt ${last.attempt} was refused: ${last.reason}` : '';
    return giveUp(step, error, run.maxRepairs === 0 ? 'repair is limited to 0 attempts' : `gave up after ${run.repairAttempts} repair attempt(s)${refused}`);
  }
  // A repair may take REPAIR_MAX_S (and the service retries' waits): an Express execution without that much time left hands it to a new one.
  if (mustContinueBefore(deps.executionLimits, step.exec, run.mode, deps.now(), repairWorstCaseS(REPAIR_MAX_S))) {
    run.repairDue = error;
    step.writes.event('execution_continued', {
      ...(error.node_id ? { nodeId: error.node_id } : {}),
      message: `continuing as a new execution before repair, after ${step.exec.advances} steps`,
    });
    await step.writes.commit();
    return { kind: 'continue', runId: run.runId, owner: step.owner };
  }
  delete run.repairDue;
  run.repairAttempts += 1;
  run.lastErrorSignature = signature;
  step.writes.event('repair_started', {
    ...(error.node_id ? { nodeId: error.node_id } : {}),
    message: error.message,
    data: { attempt: run.repairAttempts, max: run.maxRepairs, category: error.category, code: error.code },
  });
  await step.writes.commit();
  return { kind: 'repair', runId: run.runId, owner: step.owner, exec: step.exec, failedNode: error.node_id ?? '', attempt: run.repairAttempts };
};

/**
 * What the Repair state's report does to the run: every attempt is recorded in `run.repairs`; an
 * applied one is adopted (its version becomes the run's, and the walk replays what it can); a refused
 * proposal goes to the next attempt (which is told why) until `maxRepairs`; a failed one fails the run.
 */
export const settleRepairAttempt = async (step: Advance, input: RepairInput): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  if (input.attempt !== run.repairAttempts) {
    throw new StaleRunError(`run ${run.runId} is not waiting for repair attempt ${input.attempt} (in flight: ${run.repairAttempts})`);
  }
  const failure: RunError = run.lastError ?? { category: 'execution_failure', code: 'FAILED', message: 'the run failed', fixable: false };
  const report = input.repair;
  // The Repair state writes no run item: the last write is the commit that sent the run there.
  const attempt = {
    attempt: input.attempt,
    irVersion: run.irVersion,
    ...(failure.node_id ? { nodeId: failure.node_id } : {}),
    startedAt: run.updatedAt,
    at: deps.now(),
  };
  if (input.error || !report?.applied) {
    const why = input.error ? `${input.error.Error}: ${input.error.Cause ?? ''}` : (report?.message ?? 'no repair was proposed');
    const refused = report?.problems !== undefined && !input.error;
    const outcome = refused ? 'refused' : 'failed';
    const record: RepairAttempt = {
      ...attempt,
      outcome,
      reason: clip(why, REASON_CHARS),
      ...(refused ? { problems: clipProblems(report?.problems ?? []) } : {}),
      ...(report?.usage ? { usage: report.usage } : {}),
    };
    recordAttempt(run, record);
    // A repair that was not applied still cost its LLM call; an applied one reports it in its IR version.
    addRepairUsage(run, report?.usage);
    step.writes.event('repair_failed', { ...(failure.node_id ? { nodeId: failure.node_id } : {}), message: why, data: { attempt: input.attempt, outcome } });
    if (refused) return startRepairAttempt(step, failure);
    return giveUp(step, failure, `repair attempt ${input.attempt} failed: ${why}`);
  }
  const version = nextIrVersion(run);
  const item = await deps.store.getIrVersion(run.runId, version);
  if (!item) throw new InvalidInputError(`repair reported success but run ${run.runId} has no workflow version ${version}`);
  const proposed: RepairAttempt = {
    ...attempt,
    outcome: 'applied',
    version: item.version,
    reason: clip(item.reason ?? report.message, REASON_CHARS),
    ...(item.usage ? { usage: item.usage } : {}),
  };
  addRepairUsage(run, item.usage);
  // A person looks at the patch first when the run's or the workflow's policy says so (repair/held-repair.ts).
  if (repairNeedsApproval(run, step.ir, item.source)) return holdRepair(step, item, { ...proposed, outcome: 'held' });
  recordAttempt(run, proposed);
  return adoptRepair(step, item, input.attempt);
};

/**
 * Adopts a repair's workflow version (applied by the repair loop, or approved by a person): the run moves
 * to it, and the walk from the start replays what it can and runs the failed node again.
 */
export const adoptRepair = (step: Advance, item: IrVersionItem, attempt: number): Promise<AdvanceOutcome> => {
  const { run } = step;
  run.irVersion = item.version;
  run.repairedNodes = [...new Set([...run.repairedNodes, ...(item.nodesChanged ?? [])])];
  step.writes.event('repair_applied', {
    message: item.reason ?? `workflow version ${item.version}`,
    data: { attempt, version: item.version, source: item.source, nodesChanged: item.nodesChanged ?? [] },
  });
  run.needsWalk = true;
  step.ir = item.ir;
  return walkFromStart(step);
};
