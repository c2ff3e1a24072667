import { makeAnthropicRepairLlm, repairModelFromEnv } from '../../adapters/anthropic-repair-llm.ts';
import {
  ConfigurationError,
  makeCatalog,
  type NodeCatalog,
  type NodeRunner,
  REPAIR_LLM_TIMEOUT_S,
  type RepairLlm,
  type RepairReport,
  type RunStore,
  repairRun,
} from '../../core/index.ts';
import { builtinCatalog } from '../../nodes/catalog.ts';
import { costUsd } from '../../nodes/llm-prices.ts';
import { engineNodeSpecs } from '../../nodes/workflow.ts';
import { settleTelemetry } from './telemetry-settle.ts';

export interface RepairDeps {
  store: RunStore;
  catalog: NodeCatalog;
  /** Undefined when no ANTHROPIC_API_KEY is configured: the rules still run. */
  llm?: RepairLlm;
  /** Why there is no `llm`, when its key could not be read. */
  llmUnavailable?: string;
  model: string;
  now: () => number;
}

/** The Repair state: one repair attempt (core's `repairRun`), priced with the one price table. */
export const makeRepairHandler =
  (deps: RepairDeps) =>
  (event: unknown): Promise<RepairReport> =>
    repairRun(event, { ...deps, costOf: costUsd });

/**
 * A RepairLlm from ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL; undefined without a key (the rules still run).
 * Its call is bounded by REPAIR_LLM_TIMEOUT_S, which the Repair Lambda's timeout (REPAIR_MAX_S) is built on.
 */
const llmFrom = (config: { apiKey?: string | undefined; baseURL?: string | undefined }): RepairLlm | undefined =>
  config.apiKey
    ? makeAnthropicRepairLlm({ apiKey: config.apiKey, timeoutMs: REPAIR_LLM_TIMEOUT_S * 1000, ...(config.baseURL ? { baseURL: config.baseURL } : {}) })
    : undefined;

/**
 * The local host's Repair binding (`LocalHostOptions.makeRepairHandler`), configured from the environment:
 * ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, FLOWMEND_REPAIR_MODEL.
 */
export const envRepairHandler =
  (env: NodeJS.ProcessEnv = process.env) =>
  ({ store, runners }: { store: RunStore; runners: readonly NodeRunner[] }): ((event: unknown) => Promise<RepairReport>) => {
    const llm = llmFrom({ apiKey: env.ANTHROPIC_API_KEY?.trim(), baseURL: env.ANTHROPIC_BASE_URL?.trim() });
    return makeRepairHandler({
      store,
      catalog: makeCatalog([...runners, ...engineNodeSpecs]),
      ...(llm ? { llm } : {}),
      model: repairModelFromEnv(env),
      now: Date.now,
    });
  };

let awsStore: RunStore | undefined;

/**
 * Lambda entry. Env: the store's (aws-deps), the Anthropic key (ANTHROPIC_API_KEY or the secret named by
 * FLOWMEND_ANTHROPIC_SECRET_ID, read once per cold start), FLOWMEND_REPAIR_MODEL. A key that cannot be
 * read (no such secret: the stack deploys without one) leaves the LLM out of this attempt, not the
 * rules: the attempt runs them and says why there was no LLM.
 */
export const handler = async (event: unknown): Promise<RepairReport> => {
  const { secretAwareLlmConfig } = await import('../../adapters/anthropic-key.ts');
  if (awsStore === undefined) {
    const { awsDeps } = await import('./aws-deps.ts');
    awsStore = awsDeps().store;
  }
  let llm: RepairLlm | undefined;
  let llmUnavailable: string | undefined;
  try {
    llm = llmFrom(await secretAwareLlmConfig()());
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    llmUnavailable = `no LLM repair: ${error.message}`;
  }
  const deps = { store: awsStore, catalog: builtinCatalog, model: repairModelFromEnv(), now: Date.now };
  try {
    return await makeRepairHandler({ ...deps, ...(llm ? { llm } : {}), ...(llmUnavailable ? { llmUnavailable } : {}) })(event);
  } finally {
    await settleTelemetry();
  }
};
