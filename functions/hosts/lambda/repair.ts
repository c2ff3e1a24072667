import { InvalidInputError, RunNotFoundError, StaleRunError, CorruptItemError } from '../../core/index.ts';
import { makeAnthropicRepairLlm, repairModelFromEnv } from '../../adapters/anthropic-repair-llm.ts';
import { makeCatalog, type NodeCatalog, type NodeRunner } from '../../core/index.ts';
import { completedNodes, planRepair, type RepairFailure, type RepairLlm } from '../../core/index.ts';
import type { RunStore } from '../../core/index.ts';
import { type RepairReport, RepairOutcomeSchema } from '../../core/index.ts';
import { validateWorkflow } from '../../core/index.ts';
import { builtinCatalog } from '../../nodes/catalog.ts';
import { engineNodeSpecs } from '../../nodes/workflow.ts';
import { costUsd } from '../../nodes/llm-prices.ts';
import { recordsOfRun } from '../../core/index.ts';

export interface RepairDeps {
  store: RunStore;
  catalog: NodeCatalog;
  /** Undefined when no ANTHROPIC_API_KEY is configured: the rules still run. */
  llm?: RepairLlm;
  model: string;
  now: () => number;
  maxLlmCallsPerRepair?: number;
}

/**
 * The Repair state: plans a repair of the run's current workflow and, when one is found, writes it as
 * the next IR version (never the run item: Advance, the run's owner, adopts it). Expected failures
 * come back as `{applied: false, message}`.
 */
export const makeRepairHandler = (deps: RepairDeps) => async (event: unknown): Promise<RepairReport> => {
  const parsed = RepairOutcomeSchema.safeParse(event);
  if (!parsed.success) throw new InvalidInputError(`Repair got an event it cannot read: ${parsed.error.message}`);
  const { runId, owner, failedNode } = parsed.data;
  const run = await deps.store.getRun(runId);
  if (!run) throw new RunNotFoundError(`run ${runId} does not exist`);
  if (run.owner?.id !== owner) throw new StaleRunError(`run ${runId} is now owned by ${run.owner?.id ?? 'nobody'}, not ${owner}`);
  // A retried call after the version was written: report it again instead of planning a second one.
  const written = await deps.store.getIrVersion(runId, run.irVersion + 1);
  if (written) return { applied: true, message: written.reason ?? `workflow version ${written.version} (${written.source})` };
  const current = await deps.store.getIrVersion(runId, run.irVersion);
  if (!current) throw new CorruptItemError(`run ${runId} has no workflow version ${run.irVersion}`);

  const issues = validateWorkflow(current.ir, deps.catalog).filter((i) => i.severity === 'error');
  let failure: RepairFailure;
  if (issues.length > 0 && (failedNode === '' || run.lastError?.category === 'validation')) failure = { kind: 'static', issues };
  else if (run.lastError) failure = { kind: 'runtime', error: run.lastError };
  else return { applied: false, message: 'nothing to repair: the run records no error and its workflow validates' };

  const steps = await recordsOfRun(deps.store, run);
  const plan = await planRepair(
    { workflow: current.ir, failure, failedNode, completed: completedNodes(run, steps), inputs: run.params, catalog: deps.catalog },
    { ...(deps.llm ? { llm: deps.llm } : {}), model: deps.model, costOf: costUsd, ...(deps.maxLlmCallsPerRepair ? { maxLlmCalls: deps.maxLlmCallsPerRepair } : {}) },
  );
  if (!plan.ok) return { applied: false, message: plan.message, ...(plan.usage ? { usage: plan.usage } : {}) };
  await deps.store.putIrVersion({
    runId, version: run.irVersion + 1, ir: plan.ir, source: plan.source, reason: plan.reason,
    diff: plan.diff, nodesChanged: plan.nodesChanged, createdAt: deps.now(), ...(plan.usage ? { usage: plan.usage } : {}),
  });
  return { applied: true, message: plan.reason };
};

/** A RepairLlm from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL; undefined without a key (the rules still run). */
const llmFrom = (config: { apiKey?: string | undefined; baseURL?: string | undefined }): RepairLlm | undefined =>
  config.apiKey ? makeAnthropicRepairLlm({ apiKey: config.apiKey, ...(config.baseURL ? { baseURL: config.baseURL } : {}) }) : undefined;

/**
 * The local host's Repair binding (`LocalHostOptions.makeRepairHandler`), configured from the environment:
 * ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, FLOWMEND_REPAIR_MODEL.
 */
export const envRepairHandler =
  (env: NodeJS.ProcessEnv = process.env, options: { maxLlmCallsPerRepair?: number } = {}) =>
  ({ store, runners }: { store: RunStore; runners: readonly NodeRunner[] }): ((event: unknown) => Promise<RepairReport>) => {
    const llm = llmFrom({ apiKey: env.ANTHROPIC_API_KEY?.trim(), baseURL: env.ANTHROPIC_BASE_URL?.trim() });
    return makeRepairHandler({ store, catalog: makeCatalog([...runners, ...engineNodeSpecs]), ...(llm ? { llm } : {}), model: repairModelFromEnv(env), now: Date.now, ...options });
  };

let awsHandler: ((event: unknown) => Promise<RepairReport>) | undefined;

/**
 * Lambda entry; clients are built on the first call of a cold start. Env: the store's (aws-deps), the
 * Anthropic key (ANTHROPIC_API_KEY or the secret named by FLOWMEND_ANTHROPIC_SECRET_ID), FLOWMEND_REPAIR_MODEL.
 */
export const handler = async (event: unknown): Promise<RepairReport> => {
  if (!awsHandler) {
    const { awsDeps } = await import('./aws-deps.ts');
    const { secretAwareLlmConfig } = await import('../../adapters/anthropic-key.ts');
    const { store } = awsDeps();
    const llm = llmFrom(await secretAwareLlmConfig()());
    awsHandler = makeRepairHandler({ store, catalog: builtinCatalog, ...(llm ? { llm } : {}), model: repairModelFromEnv(), now: Date.now });
  }
  return awsHandler(event);
};
