import { CorruptItemError, InvalidInputError, RunNotFoundError, StaleRunError } from '../errors.ts';
import type { NodeCatalog } from '../node-type.ts';
import type { RunItem } from '../run-model.ts';
import { recordsOfRun } from '../run-report.ts';
import type { RunStore } from '../run-store.ts';
import { RepairOutcomeSchema, type RepairReport } from '../state-io.ts';
import { validateWorkflow } from '../validate.ts';
import type { ValidationIssue } from '../validation-issue.ts';
import { completedNodes } from './completed-nodes.ts';
import { nextIrVersion } from './next-version.ts';
import { planRepair } from './plan-repair.ts';
import type { CostOf, RepairFailure, RepairLlm } from './types.ts';

export interface RepairRunDeps {
  store: RunStore;
  catalog: NodeCatalog;
  /** Undefined when no API key is configured: the rules still run. */
  llm?: RepairLlm;
  /** Why there is no `llm` (the host could not read its key). */
  llmUnavailable?: string;
  model: string;
  costOf: CostOf;
  now: () => number;
  maxTokens?: number;
}

/**
 * What is repaired: the static issues of a workflow no node ran yet (or a run that failed its
 * validation), else the run's last error. Undefined when there is nothing to repair.
 */
const failureOf = (run: RunItem, failedNode: string, issues: ValidationIssue[]): RepairFailure | undefined => {
  if (issues.length > 0 && (failedNode === '' || run.lastError?.category === 'validation')) return { kind: 'static', issues };
  return run.lastError ? { kind: 'runtime', error: run.lastError } : undefined;
};

/** What the previous attempt's proposal got wrong, when it was refused for this same workflow version. */
const previousRefusals = (run: RunItem): string[] => {
  const last = run.repairs.at(-1);
  return last?.outcome === 'refused' && last.irVersion === run.irVersion ? (last.problems ?? []) : [];
};

/**
 * One repair attempt (the Repair state): plans a repair of the run's current workflow (the rules, then
 * at most one LLM call told what was wrong with the last refused proposal) and, when one is found,
 * writes it as the next IR version. It never writes the run item: Advance, the run's owner, records
 * the attempt and adopts the version (repair-loop.ts). Expected failures come back as data.
 */
export const repairRun = async (event: unknown, deps: RepairRunDeps): Promise<RepairReport> => {
  const parsed = RepairOutcomeSchema.safeParse(event);
  if (!parsed.success) throw new InvalidInputError(`Repair got an event it cannot read: ${parsed.error.message}`);
  const { runId, owner, failedNode } = parsed.data;
  const run = await deps.store.getRun(runId);
  if (!run) throw new RunNotFoundError(`run ${runId} does not exist`);
  if (run.owner?.id !== owner) throw new StaleRunError(`run ${runId} is now owned by ${run.owner?.id ?? 'nobody'}, not ${owner}`);
  // A retried call after the version was written: report it again instead of planning a second one.
  const version = nextIrVersion(run);
  const written = await deps.store.getIrVersion(runId, version);
  if (written) return { applied: true, message: written.reason ?? `workflow version ${written.version} (${written.source})` };
  const current = await deps.store.getIrVersion(runId, run.irVersion);
  if (!current) throw new CorruptItemError(`run ${runId} has no workflow version ${run.irVersion}`);

  const issues = validateWorkflow(current.ir, deps.catalog).filter((i) => i.severity === 'error');
  const failure = failureOf(run, failedNode, issues);
  if (!failure) return { applied: false, message: 'nothing to repair: the run records no error and its workflow validates' };

  const records = await recordsOfRun(deps.store, run);
  const plan = await planRepair(
    { workflow: current.ir, failure, failedNode, completed: completedNodes(run, records), inputs: run.params, catalog: deps.catalog },
    {
      ...(deps.llm ? { llm: deps.llm } : {}),
      ...(deps.llmUnavailable ? { llmUnavailable: deps.llmUnavailable } : {}),
      model: deps.model,
      costOf: deps.costOf,
      ...(deps.maxTokens ? { maxTokens: deps.maxTokens } : {}),
    },
    previousRefusals(run),
  );
  if (!plan.ok)
    return { applied: false, message: plan.message, ...(plan.problems ? { problems: plan.problems } : {}), ...(plan.usage ? { usage: plan.usage } : {}) };
  await deps.store.putIrVersion({
    runId,
    version,
    ir: plan.ir,
    source: plan.source,
    reason: plan.reason,
    diff: plan.diff,
    nodesChanged: plan.nodesChanged,
    createdAt: deps.now(),
    ...(plan.usage ? { usage: plan.usage } : {}),
  });
  return { applied: true, message: plan.reason };
};
