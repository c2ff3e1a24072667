import type { Workflow, WorkflowNode } from '../ir.ts';
import { parseWorkflow } from '../parse-workflow.ts';
import { formatIssuePath, type ValidationIssue } from '../validation-issue.ts';
import { isTemplatedRef, refOfItems } from './templated-ref.ts';
import { nestingLimit } from './validate-children.ts';
import { WORKFLOW_TYPE } from './workflow-params.ts';

/** What a workflow node names: a file (relative to the workflow that names it) or a registered workflow. */
export type ChildSource = { kind: 'ref'; ref: string; from: string } | { kind: 'name'; name: string };

/** Reads a child workflow for the host (files for the CLI, the registry for the API); `origin` identifies it (an absolute path, `name:x`). */
export type ChildLoader = (source: ChildSource) => Promise<{ ok: true; raw: unknown; origin: string } | { ok: false; message: string }>;

export type InlineResult = { ok: true; workflow: Workflow } | { ok: false; issues: ValidationIssue[] };

const issue = (path: string, code: string, message: string, hint?: string): ValidationIssue => ({
  path,
  code,
  message,
  severity: 'error',
  ...(hint ? { hint } : {}),
});

const sourceOf = (node: WorkflowNode, from: string): ChildSource | { kind: 'refused'; message: string } | undefined => {
  const { workflow_ref: ref, workflow_name: name } = node.params;
  if (typeof ref === 'string' && isTemplatedRef(ref)) {
    const one = refOfItems(node, ref);
    return one.ok ? { kind: 'ref', ref: one.ref, from } : { kind: 'refused', message: one.message };
  }
  if (typeof ref === 'string' && ref !== '') return { kind: 'ref', ref, from };
  if (typeof name === 'string' && name !== '') return { kind: 'name', name };
  return undefined;
};

/**
 * Freezes every child a workflow names into its workflow node (`workflow_ir`, beside the ref), down
 * the whole tree, before the run is created: the run's first version then holds every child, so a
 * resume or a repair never reads a file again. Refuses a cycle (naming it) and nesting past max_depth.
 */
export const inlineChildWorkflows = (workflow: Workflow, origin: string, load: ChildLoader): Promise<InlineResult> =>
  inlineAt(workflow, [origin], load, '', Number.POSITIVE_INFINITY);

async function inlineAt(workflow: Workflow, chain: readonly string[], load: ChildLoader, prefix: string, limit: number): Promise<InlineResult> {
  const issues: ValidationIssue[] = [];
  const nodes: WorkflowNode[] = [];
  const from = chain[chain.length - 1] ?? '';
  for (const [index, node] of workflow.nodes.entries()) {
    if (node.type !== WORKFLOW_TYPE) {
      nodes.push(node);
      continue;
    }
    const at = (param: string): string => `${prefix}${formatIssuePath(['nodes', index, 'params', param])}`;
    const maxDepth = nestingLimit(node.params, limit);
    const source = sourceOf(node, from);
    let raw: unknown = node.params.workflow_ir;
    let childChain = chain;
    if (source?.kind === 'refused' && raw === undefined) {
      issues.push(issue(at('workflow_ref'), 'WORKFLOW_REF_TEMPLATED', `Node '${node.id}' ${source.message}`));
      continue;
    }
    if (source !== undefined && source.kind !== 'refused' && raw === undefined) {
      const loaded = await load(source);
      const named = source.kind === 'ref' ? `workflow_ref '${source.ref}'` : `workflow_name '${source.name}'`;
      if (!loaded.ok) {
        issues.push(issue(at(source.kind === 'ref' ? 'workflow_ref' : 'workflow_name'), 'WORKFLOW_NOT_FOUND', `Node '${node.id}' ${named}: ${loaded.message}`));
        continue;
      }
      if (chain.includes(loaded.origin)) {
        const cycle = [...chain.slice(chain.indexOf(loaded.origin)), loaded.origin].join(' -> ');
        issues.push(
          issue(
            at(source.kind === 'ref' ? 'workflow_ref' : 'workflow_name'),
            'WORKFLOW_CYCLE',
            `Node '${node.id}' ${named} makes a cycle of workflows: ${cycle}`,
            'A workflow cannot run itself, directly or through its children; break the cycle',
          ),
        );
        continue;
      }
      raw = loaded.raw;
      childChain = [...chain, loaded.origin];
    } else if (raw !== undefined) {
      // An inline child: its own refs are relative to the workflow that holds it.
      childChain = [...chain, `${from}#${node.id}`];
    }
    if (raw === undefined) {
      nodes.push(node);
      continue;
    }
    if (childChain.length - 1 > maxDepth) {
      issues.push(
        issue(
          at('workflow_ir'),
          'NESTING_TOO_DEEP',
          `Node '${node.id}' nests workflows ${childChain.length - 1} deep, past the max_depth ${maxDepth} (its own, or the smallest above it): ${childChain.join(' -> ')}`,
          'Flatten the nesting, or raise max_depth (at most 100)',
        ),
      );
      continue;
    }
    const parsed = parseWorkflow(raw);
    if (!parsed.ok) {
      issues.push(
        ...parsed.issues.map((i) => ({ ...i, path: `${at('workflow_ir')}.${i.path}`, message: `Child workflow of node '${node.id}': ${i.message}` })),
      );
      continue;
    }
    const inner = await inlineAt(parsed.workflow, childChain, load, `${at('workflow_ir')}.`, maxDepth);
    if (!inner.ok) {
      issues.push(...inner.issues);
      continue;
    }
    nodes.push({ ...node, params: { ...node.params, workflow_ir: inner.workflow } });
  }
  if (issues.length > 0) return { ok: false, issues };
  // Nothing inlined: the workflow itself (a parsed workflow is known as such to parseWorkflow, which then does not parse it again).
  return { ok: true, workflow: nodes.every((node, index) => node === workflow.nodes[index]) ? workflow : { ...workflow, nodes } };
}
