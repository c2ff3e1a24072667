import { sameJson } from '../cache-key.ts';
import type { Workflow } from '../ir.ts';
import type { NodeCatalog } from '../node-type.ts';
import { parseWorkflow, validateWorkflow } from '../validate.ts';
import type { ValidationIssue } from '../validation-issue.ts';
import { frozenNodeProblems } from './frozen-nodes.ts';
import { keepUnchangedProblems } from './keep-unchanged.ts';
import { keptGateProblems } from './kept-gates.ts';
import type { CompletedNode } from './types.ts';

const MAX_PROBLEMS = 10;

export interface ProposalCheckInput {
  before: Workflow;
  /** The proposed workflow as raw JSON (or an already parsed workflow). */
  proposal: unknown;
  completed: readonly CompletedNode[];
  catalog: NodeCatalog;
  /** For a machine's proposal: the reason it gave, against which the keep-unchanged rule is judged. Omitted for a person's patch. */
  keepUnchanged?: { reason: string };
}

export type ProposalCheck = { ok: true; ir: Workflow } | { ok: false; problems: string[] };

const issueLine = (issue: ValidationIssue): string => `${issue.path ? `${issue.path}: ` : ''}${issue.message}${issue.hint ? ` (${issue.hint})` : ''}`;

const bounded = (problems: string[]): string[] =>
  problems.length > MAX_PROBLEMS ? [...problems.slice(0, MAX_PROBLEMS), `… and ${problems.length - MAX_PROBLEMS} more`] : problems;

/**
 * Whether a proposed workflow may replace `before`: it parses with the IR schema, changes something,
 * passes static validation (errors only), keeps what it had no reason to change (machine proposals),
 * and re-runs no completed node with side effects.
 */
export function checkProposal(input: ProposalCheckInput): ProposalCheck {
  const parsed = parseWorkflow(input.proposal);
  if (!parsed.ok) return { ok: false, problems: bounded(parsed.issues.map((i) => `invalid workflow: ${issueLine(i)}`)) };
  const ir = parsed.workflow;
  if (sameJson(ir, input.before)) return { ok: false, problems: ['the proposal changes nothing'] };
  const errors = validateWorkflow(ir, input.catalog).filter((i) => i.severity === 'error');
  const problems = errors.map((i) => `validation: ${issueLine(i)}`);
  if (input.keepUnchanged !== undefined) {
    problems.push(...keepUnchangedProblems(input.before, ir, input.keepUnchanged.reason, input.catalog));
    problems.push(...keptGateProblems(input.before, ir));
  }
  problems.push(...frozenNodeProblems(input.before, ir, input.completed));
  return problems.length === 0 ? { ok: true, ir } : { ok: false, problems: bounded(problems) };
}
