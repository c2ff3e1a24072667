export { checkProposal, type ProposalCheck, type ProposalCheckInput } from './check-proposal.ts';
export { completedNodes } from './completed-nodes.ts';
export { changedNodeIds, diffWorkflows } from './diff.ts';
export { frozenNodeProblems, nodesToRerun, type RerunNode } from './frozen-nodes.ts';
export { keepUnchangedProblems } from './keep-unchanged.ts';
export { applyManualPatch, type ManualPatchInput, type ManualPatchResult } from './manual-patch.ts';
export { describeOutputShape } from './output-shape.ts';
export { type ParsedProposal, parseProposal, type RepairProposal, RepairProposalSchema } from './parse-proposal.ts';
export { DEFAULT_REPAIR_MAX_TOKENS, type PlannerDeps, planRepair, summariseFailure } from './plan-repair.ts';
export { buildRepairPrompt, REPAIR_SYSTEM_PROMPT } from './prompt.ts';
export { applyRules, describeRuleFix, type RuleFix, runtimeContext } from './rules.ts';
export { fixTemplateAtRuntime, fixTemplateStatically } from './template-fix.ts';
export type {
  CompletedNode,
  CostOf,
  RepairChange,
  RepairContext,
  RepairFailure,
  RepairLlm,
  RepairLlmReply,
  RepairLlmRequest,
  RepairPlan,
} from './types.ts';
