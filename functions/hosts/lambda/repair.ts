import { makeAnthropicRepairLlm, repairModelFromEnv } from '../../adapters/anthropic-repair-llm.ts';
import {
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
  try {
    return await awsHandler(event);
  } finally {
    await settleTelemetry();
  }
};
