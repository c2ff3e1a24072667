import { FlowmendError } from '../errors.ts';
import type { LlmUsage } from '../node-type.ts';
import { checkProposal } from './check-proposal.ts';
import { changedNodeIds, diffWorkflows } from './diff.ts';
import { editLine } from './ir-edit.ts';
import { parseProposal } from './parse-proposal.ts';
import { buildRepairPrompt, REPAIR_SYSTEM_PROMPT } from './prompt.ts';
import { applyRules, describeRuleFix } from './rules.ts';
import type { CostOf, RepairContext, RepairLlm, RepairPlan } from './types.ts';

export const DEFAULT_REPAIR_MAX_TOKENS = 8192;

export interface PlannerDeps {
  /** Undefined when no API key is configured: the rules still run. */
  llm?: RepairLlm;
  /** Why there is no `llm` (the host could not read its key), for the attempt's message. */
  llmUnavailable?: string;
  model: string;
  costOf: CostOf;
  maxTokens?: number;
}

/** A message's first line, joined with the next when it only introduces it (`Unresolved template:` then the template). */
const leadLine = (text: string): string => {
  const [first = '', second] = text.split('\n').filter((line) => line.trim() !== '');
  return first.trimEnd().endsWith(':') && second ? `${first.trim()} ${second.trim()}` : first;
};

/**
 * What failed, in a few words, for the repair's messages. A node's failure is named by its node only: its
 * message is printed beside every repair message already (the node's line, the run's error), once is enough.
 */
export function summariseFailure(ctx: RepairContext): string {
  const { failure } = ctx;
  if (failure.kind === 'runtime') return failure.error.node_id === undefined ? leadLine(failure.error.message) : `node '${failure.error.node_id}'`;
  const shown = failure.issues
    .slice(0, 3)
    .map((i) => i.message)
    .join('; ');
  return failure.issues.length > 3 ? `${shown}; and ${failure.issues.length - 3} more` : shown;
}

/**
 * Plans one repair attempt: the deterministic rules first (no LLM call), then at most one LLM
 * proposal, told what was wrong with the previous attempt's (`refusals`). Never throws for an
 * expected failure (no key, a failed call, a refused proposal): the plan says why, and a refused
 * proposal's `problems` are what the next attempt is told.
 */
export async function planRepair(ctx: RepairContext, deps: PlannerDeps, refusals: readonly string[] = []): Promise<RepairPlan> {
  const summary = summariseFailure(ctx);
  const ruled = applyRules(ctx);
  let rulesNote = `the rules found no fix for ${summary}`;
  if (ruled !== undefined) {
    const check = checkProposal({ before: ctx.workflow, proposal: ruled.ir, completed: ctx.completed, catalog: ctx.catalog });
    if (check.ok) {
      return {
        ok: true,
        source: 'rules',
        ir: check.ir,
        reason: describeRuleFix(ruled),
        diff: ruled.edits.map(editLine),
        nodesChanged: changedNodeIds(ctx.workflow, check.ir),
        llmCalls: 0,
      };
    }
    rulesNote = `the rules' fix (${ruled.edits.map(editLine).join('; ')}) was not enough for ${summary}: ${check.problems.join('; ')}`;
  }
  if (deps.llm === undefined) return { ok: false, message: `${deps.llmUnavailable ?? 'an LLM repair needs ANTHROPIC_API_KEY'}; ${rulesNote}`, llmCalls: 0 };

  let reply: Awaited<ReturnType<RepairLlm['complete']>>;
  try {
    reply = await deps.llm.complete({
      system: REPAIR_SYSTEM_PROMPT,
      prompt: buildRepairPrompt(ctx, refusals),
      model: deps.model,
      maxTokens: deps.maxTokens ?? DEFAULT_REPAIR_MAX_TOKENS,
    });
  } catch (error) {
    if (!(error instanceof FlowmendError)) throw error;
    return { ok: false, message: `the repair LLM call failed: ${error.message}`, llmCalls: 1 };
  }
  const { input_tokens, output_tokens } = reply.usage;
  const usage: LlmUsage = { model: deps.model, input_tokens, output_tokens, cost_usd: deps.costOf(deps.model, { input_tokens, output_tokens }) };
  const refused = (problems: string[]): RepairPlan => ({
    ok: false,
    message: `the LLM's repair proposal for ${summary} was refused (${input_tokens + output_tokens} tokens): ${problems.join('; ')}`,
    problems,
    llmCalls: 1,
    usage,
  });
  const parsed = parseProposal(reply.text);
  if (!parsed.ok) return refused([parsed.message]);
  const { workflow, reason } = parsed.proposal;
  const check = checkProposal({ before: ctx.workflow, proposal: workflow, completed: ctx.completed, catalog: ctx.catalog, keepUnchanged: { reason } });
  if (!check.ok) return refused(check.problems);
  return {
    ok: true,
    source: 'llm',
    ir: check.ir,
    reason,
    diff: diffWorkflows(ctx.workflow, check.ir),
    nodesChanged: changedNodeIds(ctx.workflow, check.ir),
    llmCalls: 1,
    usage,
  };
}
