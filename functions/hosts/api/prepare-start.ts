import { InvalidInputError } from '../../core/errors.ts';
import type { Workflow } from '../../core/ir.ts';
import { prepareInputs } from '../../core/inputs.ts';
import type { NodeCatalog } from '../../core/node-type.ts';
import { formatIssues, hasErrors, parseWorkflow, validateWorkflow } from '../../core/validate.ts';
import { chooseMode } from '../../core/execution-limits.ts';

export interface PreparedStart {
  workflow: Workflow;
  params: Record<string, unknown>;
  mode: 'express' | 'standard';
}

/**
 * Everything a start checks before a run is written, in the CLI's order: parse, inputs, validation (with
 * repair on, a workflow that fails validation starts and is repaired before any node runs), mode.
 * Throws InvalidInputError whose details say what is wrong.
 */
export const prepareStart = (
  raw: unknown,
  rawParams: Record<string, unknown>,
  options: { repairEnabled: boolean; mode?: 'express' | 'standard' | undefined },
  catalog: NodeCatalog,
): PreparedStart => {
  const parsed = parseWorkflow(raw);
  if (!parsed.ok) throw new InvalidInputError(`the workflow does not parse:\n${formatIssues(parsed.issues)}`, { details: { issues: parsed.issues } });
  const inputs = prepareInputs(parsed.workflow, rawParams);
  if (!inputs.ok) throw new InvalidInputError(inputs.problems.map((p) => p.message).join('\n'), { details: { problems: inputs.problems } });
  const issues = validateWorkflow(parsed.workflow, catalog);
  if (hasErrors(issues) && !options.repairEnabled) {
    throw new InvalidInputError(`the workflow does not validate:\n${formatIssues(issues)}`, { details: { issues } });
  }
  return { workflow: parsed.workflow, params: inputs.params, mode: options.mode ?? chooseMode(parsed.workflow, catalog) };
};
