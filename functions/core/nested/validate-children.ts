import { didYouMean } from '../closest-match.ts';
import { isInputRequired, type Workflow, type WorkflowNode } from '../ir.ts';
import type { NodeCatalog } from '../node-type.ts';
import { parseWorkflow } from '../parse-workflow.ts';
import { findTemplates } from '../templates.ts';
import { issueError as error, formatIssuePath, type ValidationIssue } from '../validation-issue.ts';
import { DEFAULT_MAX_NESTING, STORAGE_MODE_REFUSALS, WORKFLOW_TYPE } from './workflow-params.ts';

/**
 * Where a workflow sits in a tree of workflow nodes: its depth (0 for the run's own) and the deepest
 * nesting its ancestors allow (the smallest max_depth on the way down).
 */
export interface Nesting {
  depth: number;
  limit: number;
}
export const TOP_LEVEL: Nesting = { depth: 0, limit: Number.POSITIVE_INFINITY };

/** A workflow node's own max_depth, bounded by what its ancestors allow. */
export const nestingLimit = (params: Record<string, unknown>, inherited: number): number =>
  Math.min(typeof params.max_depth === 'number' ? params.max_depth : DEFAULT_MAX_NESTING, inherited);

/** Validates a child workflow (validate.ts's `validateWorkflow`, passed in to keep the files acyclic). */
export type ValidateAt = (workflow: Workflow, catalog: NodeCatalog, nesting: Nesting) => ValidationIssue[];

/** The child's own issues, re-pathed under the parent node so that a message says which child and where. */
const nestIssues = (issues: readonly ValidationIssue[], node: WorkflowNode, index: number): ValidationIssue[] =>
  issues.map((issue) => ({
    ...issue,
    path: `${formatIssuePath(['nodes', index, 'params', 'workflow_ir'])}.${issue.path}`,
    message: `Child workflow of node '${node.id}': ${issue.message}`,
  }));

/** The child's inputs against `param_mapping` (unknown names, required inputs left out). */
const checkParamMapping = (parent: Workflow, node: WorkflowNode, index: number, child: Workflow, mapping: Record<string, unknown>): ValidationIssue[] => {
  const issues: ValidationIssue[] = [];
  const inputs = Object.keys(child.inputs);
  for (const name of Object.keys(mapping)) {
    if (Object.hasOwn(child.inputs, name)) continue;
    issues.push(
      error(
        formatIssuePath(['nodes', index, 'params', 'param_mapping', name]),
        'PARAM_MAPPING_UNKNOWN_INPUT',
        `Node '${node.id}' param_mapping: the child workflow has no input '${name}'`,
        `${didYouMean(name, inputs)}Inputs of the child: ${inputs.join(', ') || 'none (declare them under "inputs" in the child)'}`,
      ),
    );
  }
  // flowmend never stores a secret input; a resume gets it again by name. So a secret reaches a child only
  // as the child's own secret input of the same name, which the same name gets back on resume.
  for (const [name, value] of Object.entries(mapping)) {
    const secret = findTemplates(value).find((ref) => parent.inputs[ref.root]?.secret === true);
    if (secret === undefined || (secret.root === name && child.inputs[name]?.secret === true && value === `\${${name}}`)) continue;
    issues.push(
      error(
        formatIssuePath(['nodes', index, 'params', 'param_mapping', name]),
        'PARAM_MAPPING_SECRET',
        `Node '${node.id}' param_mapping: '${name}' passes the secret input '${secret.root}' to the child, which would store it`,
        `Map it as "${secret.root}": "\${${secret.root}}" to a child input named '${secret.root}' declared "secret": true`,
      ),
    );
  }
  for (const [name, spec] of Object.entries(child.inputs)) {
    if (!isInputRequired(spec) || Object.hasOwn(mapping, name)) continue;
    issues.push(
      error(
        formatIssuePath(['nodes', index, 'params', 'param_mapping']),
        'PARAM_MAPPING_MISSING_INPUT',
        `Node '${node.id}' param_mapping: the child workflow requires input '${name}'${spec.description ? ` (${spec.description})` : ''}, which is not mapped`,
        `Add "${name}": "\${...}" to param_mapping, or give the input a default in the child`,
      ),
    );
  }
  return issues;
};

/** `output_mapping` against the child's declared outputs (a child that declares none outputs its last node's keys, unknown until it runs). */
const checkOutputMapping = (node: WorkflowNode, index: number, child: Workflow, mapping: Record<string, unknown>): ValidationIssue[] => {
  const outputs = Object.keys(child.outputs);
  if (outputs.length === 0) return [];
  return Object.keys(mapping)
    .filter((name) => !Object.hasOwn(child.outputs, name))
    .map((name) =>
      error(
        formatIssuePath(['nodes', index, 'params', 'output_mapping', name]),
        'OUTPUT_MAPPING_UNKNOWN_OUTPUT',
        `Node '${node.id}' output_mapping: the child workflow has no output '${name}'`,
        `${didYouMean(name, outputs)}Outputs of the child: ${outputs.join(', ')}`,
      ),
    );
};

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/**
 * Static checks of every `workflow` node: one source, a resolved child, a storage mode that means
 * something here, the nesting depth, the mappings against the child's interface, and the child itself.
 * (A cycle of workflow files is refused where the files are read: `inlineChildWorkflows`.)
 */
export function checkWorkflowNodes(workflow: Workflow, catalog: NodeCatalog, nesting: Nesting, validateAt: ValidateAt): ValidationIssue[] {
  const { depth } = nesting;
  const issues: ValidationIssue[] = [];
  workflow.nodes.forEach((node, index) => {
    if (node.type !== WORKFLOW_TYPE) return;
    const at = (param: string): string => formatIssuePath(['nodes', index, 'params', param]);
    const p = node.params;
    const sources = ['workflow_ref', 'workflow_name'].filter((k) => Object.hasOwn(p, k));
    if (sources.length > 1) {
      issues.push(
        error(
          at('workflow_name'),
          'WORKFLOW_SOURCE_AMBIGUOUS',
          `Node '${node.id}' names its child twice (workflow_ref and workflow_name)`,
          'Keep exactly one of workflow_ref, workflow_name, workflow_ir',
        ),
      );
    }
    const mode = typeof p.storage_mode === 'string' ? STORAGE_MODE_REFUSALS[p.storage_mode] : undefined;
    if (mode !== undefined)
      issues.push(
        error(at('storage_mode'), 'STORAGE_MODE_UNSUPPORTED', `Node '${node.id}' storage_mode '${String(p.storage_mode)}' is not supported: ${mode}`),
      );
    const maxDepth = nestingLimit(p, nesting.limit);
    const raw = p.workflow_ir;
    if (raw === undefined) {
      if (sources.length === 0) {
        issues.push(
          error(
            at('workflow_ref'),
            'WORKFLOW_SOURCE_MISSING',
            `Node '${node.id}' (workflow) names no child workflow`,
            'Give it one of workflow_ref (a file, relative to this workflow), workflow_name (a registered workflow) or workflow_ir (inline)',
          ),
        );
      } else {
        issues.push(
          error(
            at(sources[0] ?? 'workflow_ref'),
            'WORKFLOW_NOT_RESOLVED',
            `Node '${node.id}': ${sources[0]} '${String(p[sources[0] ?? ''])}' was not resolved to a workflow`,
            'The CLI reads workflow_ref files and registered names when it loads the parent; over the API only workflow_name and workflow_ir can be resolved',
          ),
        );
      }
      return;
    }
    if (depth + 1 > maxDepth) {
      issues.push(
        error(
          at('workflow_ir'),
          'NESTING_TOO_DEEP',
          `Node '${node.id}' nests a workflow at depth ${depth + 1}, past the max_depth ${maxDepth} (its own, or the smallest of the workflow nodes above it)`,
          'Flatten the nesting, or raise max_depth (at most 100)',
        ),
      );
      return;
    }
    const parsed = parseWorkflow(raw);
    if (!parsed.ok) {
      issues.push(...nestIssues(parsed.issues, node, index));
      return;
    }
    const child = parsed.workflow;
    issues.push(...checkParamMapping(workflow, node, index, child, asRecord(p.param_mapping) ?? {}));
    issues.push(...checkOutputMapping(node, index, child, asRecord(p.output_mapping) ?? {}));
    issues.push(...nestIssues(validateAt(child, catalog, { depth: depth + 1, limit: maxDepth }), node, index));
  });
  return issues;
}

/** An issue found inside a child workflow (not in the workflow node's own params). */
export const isChildIssue = (issue: ValidationIssue): boolean => /\.params\.workflow_ir\./.test(issue.path);

/** The keys a workflow node outputs, when they are known before it runs (its mapping, else the child's declared outputs). */
export const workflowOutputKeys = (params: Record<string, unknown>): readonly string[] | undefined => {
  // With an error_action, a failed child's node outputs `error` and `child_run_id` for the edge it takes.
  const onError = typeof params.error_action === 'string' && params.error_action !== 'error' ? ['error', 'child_run_id'] : [];
  const mapping = asRecord(params.output_mapping);
  if (mapping) return [...Object.values(mapping).filter((v): v is string => typeof v === 'string'), ...onError];
  const outputs = asRecord(asRecord(params.workflow_ir)?.outputs);
  return outputs && Object.keys(outputs).length > 0 ? [...Object.keys(outputs), ...onError] : undefined;
};
