import { chooseMode, type RunMode } from './execution-limits.ts';
import { type InputProblem, prepareInputs } from './inputs.ts';
import type { RepairApproval, Workflow } from './ir.ts';
import type { NodeCatalog } from './node-type.ts';
import { parseWorkflow } from './parse-workflow.ts';
import { hasErrors, validateWorkflow } from './validate.ts';
import { formatIssues, type ValidationIssue } from './validation-issue.ts';

/** What a host was asked to run: a workflow as received (any JSON) and the run's settings. */
export interface RunRequest {
  workflow: unknown;
  /** Defaults to the workflow's own `name`, then 'workflow'. */
  workflowName?: string | undefined;
  params: Readonly<Record<string, unknown>>;
  repairEnabled: boolean;
  maxRepairs: number;
  /** Overrides the choice made from the nodes' timeouts (`chooseMode`). */
  mode?: RunMode | undefined;
  /** Gated nodes approved in advance (`--auto-approve`): each must name a node with `"approval": "required"`. */
  autoApprove?: readonly string[] | undefined;
  /** Over the workflow's `repair.approval` for this run. */
  repairApproval?: RepairApproval | undefined;
}

/** A run ready to create: what `createRun` and the hosts' `start` take, besides ids and owner. */
export interface RunSpec {
  workflow: Workflow;
  workflowName: string;
  /** Coerced to the declared input types, defaults filled in. */
  params: Record<string, unknown>;
  repairEnabled: boolean;
  maxRepairs: number;
  mode: RunMode;
  /** Warnings (and, with repair on, the errors the first Advance will repair before any node runs). */
  issues: ValidationIssue[];
  autoApprove?: string[];
  repairApproval?: RepairApproval;
}

/** Why a request cannot start a run. `stage` says which check refused it; the message names every problem. */
export type PrepareRunRefusal = {
  ok: false;
  status: 'invalid';
  stage: 'parse' | 'inputs' | 'validation';
  message: string;
  issues?: ValidationIssue[];
  problems?: InputProblem[];
};

export type PrepareRunResult = { ok: true; spec: RunSpec } | PrepareRunRefusal;

/**
 * Everything between a request and `createRun`, for every host (CLI, StartRun, the API): parse the
 * workflow, coerce the inputs, validate, refuse an invalid workflow unless repair is on (then the first
 * Advance repairs it before any node runs), and choose the state machine. Returns data, never throws.
 */
export const prepareRun = (request: RunRequest, catalog: NodeCatalog): PrepareRunResult => {
  const parsed = parseWorkflow(request.workflow);
  if (!parsed.ok) {
    return { ok: false, status: 'invalid', stage: 'parse', message: `the workflow does not parse:\n${formatIssues(parsed.issues)}`, issues: parsed.issues };
  }
  const workflow = parsed.workflow;
  const inputs = prepareInputs(workflow, request.params);
  if (!inputs.ok) {
    return { ok: false, status: 'invalid', stage: 'inputs', message: inputs.problems.map((p) => p.message).join('\n'), problems: inputs.problems };
  }
  const gated = workflow.nodes.filter((n) => n.approval === 'required').map((n) => n.id);
  const ungated = (request.autoApprove ?? []).filter((id) => !gated.includes(id));
  if (ungated.length > 0) {
    const message = `--auto-approve names ${ungated.map((id) => `'${id}'`).join(', ')}, which ${ungated.length === 1 ? 'is' : 'are'} not a gated node of this workflow (gated: ${gated.join(', ') || 'none'})`;
    return { ok: false, status: 'invalid', stage: 'inputs', message, problems: [] };
  }
  const issues = validateWorkflow(workflow, catalog);
  if (hasErrors(issues) && !request.repairEnabled) {
    return { ok: false, status: 'invalid', stage: 'validation', message: `the workflow does not validate:\n${formatIssues(issues)}`, issues };
  }
  return {
    ok: true,
    spec: {
      workflow,
      workflowName: request.workflowName ?? workflow.name ?? 'workflow',
      params: inputs.params,
      repairEnabled: request.repairEnabled,
      maxRepairs: request.maxRepairs,
      mode: request.mode ?? chooseMode(workflow, catalog),
      issues,
      ...(request.autoApprove && request.autoApprove.length > 0 ? { autoApprove: [...new Set(request.autoApprove)] } : {}),
      ...(request.repairApproval ? { repairApproval: request.repairApproval } : {}),
    },
  };
};
