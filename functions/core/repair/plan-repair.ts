import { FlowmendError } from '../errors.ts';
import type { LlmUsage } from '../node-type.ts';
import { checkProposal } from './check-proposal.ts';
import { changedNodeIds, diffWorkflows } from './diff.ts';
import { editLine } from './ir-edit.ts';
import { parseProposal } from './parse-proposal.ts';
import { buildRepairPrompt, REPAIR_SYSTEM_PROMPT } from './prompt.ts';
import { applyRules, describeRuleFix } from './rules.ts';
import type { CostOf, RepairContext, RepairLlm, RepairPlan } from './types.ts';

export const DEFAULT_MAX_LLM_CALLS_PER_REPAIR = 2;
export const DEFAULT_REPAIR_MAX_TOKENS = 8192;

export interface PlannerDeps {
  /** Undefined when no API key is configured: the rules still run. */
  llm?: RepairLlm;
  model: string;
  costOf: CostOf;
  maxLlmCalls?: number;
  maxTokens?: number;
}

const firstLine = (text: string): string => text.split('\n')[0] ?? text;

/** The failure in one line, for messages. */
export function summariseFailure(ctx: RepairContext): string {
  const { failure } = ctx;
  if (failure.kind === 'runtime') {
    const where = failure.error.node_id === undefined ? '' : `node '${failure.error.node_id}': `;
    return `${where}${firstLine(failure.error.message)}`;
  }
  const shown = failure.issues.slice(0, 3).map((i) => i.message).join('; ');
  return failure.issues.length > 3 ? `${shown}; and ${failure.issues.length - 3} more` : shown;
}

const addUsage = (total: LlmUsage | undefined, model: string, input: number, output: number, costOf: CostOf): LlmUsage => {
  const input_tokens = (total?.input_tokens ?? 0) + input;
  const output_tokens = (total?.output_tokens ?? 0) + output;
  return { model, input_tokens, output_tokens, cost_usd: costOf(model, { input_tokens, output_tokens }) };
};

/**
 * Plans one repair: the deterministic rules first (no LLM call), then up to `maxLlmCalls` LLM
 * proposals, each refused one fed back to the next call. Never throws for an expected failure
 * (no key, a failed call, refused proposals): the plan says why.
 */
export async function planRepair(ctx: RepairContext, deps: PlannerDeps): Promise<RepairPlan> {
  const summary = summariseFailure(ctx);
  const ruled = applyRules(ctx);
  let rulesNote = `the rules found no fix for: ${summary}`;
  if (ruled !== undefined) {
    const check = checkProposal({ before: ctx.workflow, proposal: ruled.ir, completed: ctx.completed, catalog: ctx.catalog });
    if (check.ok) {
      return {
        ok: true, source: 'rules', ir: check.ir, reason: describeRuleFix(ruled), diff: ruled.edits.map(editLine),
        nodesChanged: changedNodeIds(ctx.workflow, check.ir), llmCalls: 0,
      };
    }
    rulesNote = `the rules' fix (${ruled.edits.map(editLine).join('; ')}) was not enough: ${check.problems.join('; ')}; failure: ${summary}`;
  }
  if (deps.llm === undefined) return { ok: false, message: `an LLM repair needs ANTHROPIC_API_KEY; ${rulesNote}`, llmCalls: 0 };

  const maxCalls = deps.maxLlmCalls ?? DEFAULT_MAX_LLM_CALLS_PER_REPAIR;
  let usage: LlmUsage | undefined;
  let refusals: string[] = [];
  for (let call = 1; call <= maxCalls; call++) {
    let reply: Awaited<ReturnType<RepairLlm['complete']>>;
    try {
      reply = await deps.llm.complete({
        system: REPAIR_SYSTEM_PROMPT, prompt: buildRepairPrompt(ctx, refusals), model: deps.model,
        maxTokens: deps.maxTokens ?? DEFAULT_REPAIR_MAX_TOKENS,
      });
    } catch (error) {
      if (!(error instanceof FlowmendError)) throw error;
      return { ok: false, message: `the repair LLM call failed: ${error.message}`, llmCalls: call, ...(usage ? { usage } : {}) };
    }
    usage = addUsage(usage, deps.model, reply.usage.input_tokens, reply.usage.output_tokens, deps.costOf);
    const parsed = parseProposal(reply.text);
    if (!parsed.ok) {
      refusals = [parsed.message];
      continue;
    }
    const { workflow, reason } = parsed.proposal;
    const check = checkProposal({ before: ctx.workflow, proposal: workflow, completed: ctx.completed, catalog: ctx.catalog, keepUnchanged: { reason } });
    if (!check.ok) {
      refusals = check.problems;
      continue;
    }
    return {
      ok: true, source: 'llm', ir: check.ir, reason, diff: diffWorkflows(ctx.workflow, check.ir),
      nodesChanged: changedNodeIds(ctx.workflow, check.ir), llmCalls: call, usage,
    };
  }
  const tokens = usage === undefined ? '' : ` (${usage.input_tokens + usage.output_tokens} tokens)`;
  return {
    ok: false,
    message: `the LLM's ${maxCalls} repair proposal${maxCalls === 1 ? ' was' : 's were'} refused${tokens}: ${refusals.join('; ')}; failure: ${summary}`,
    llmCalls: maxCalls,
    ...(usage ? { usage } : {}),
  };
}
