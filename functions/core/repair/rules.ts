import type { Workflow } from '../ir.ts';
import { findTemplates, resolveValue, type TemplateContext } from '../templates.ts';
import { editLine, type RuleEdit, renameParam, replaceTemplatesInWorkflow } from './ir-edit.ts';
import { fixTemplateAtRuntime, fixTemplateStatically, uniqueNearKey } from './template-fix.ts';
import type { RepairContext } from './types.ts';

/** A workflow changed by the deterministic rules, with one diff line per change. */
export interface RuleFix {
  ir: Workflow;
  edits: RuleEdit[];
}

const exprOf = (template: string): string => (template.startsWith('${') && template.endsWith('}') ? template.slice(2, -1) : template);

const stringList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);

/** The context templates resolved against when the node failed: the run's inputs and the completed nodes' outputs. */
export function runtimeContext(ctx: RepairContext): TemplateContext {
  const nodes: Record<string, Record<string, unknown>> = {};
  for (const node of ctx.completed) nodes[node.nodeId] = node.outputs;
  return { inputs: ctx.inputs, nodes };
}

/** Unresolved templates at run time: each must have exactly one fix that resolves against the real outputs. */
function fixUnresolvedTemplates(ctx: RepairContext, unresolved: readonly string[]): RuleFix | undefined {
  if (unresolved.length === 0) return undefined;
  const context = runtimeContext(ctx);
  const fixes = new Map<string, string>();
  for (const template of unresolved) {
    const fixed = fixTemplateAtRuntime(exprOf(template), context);
    if (fixed === undefined) return undefined;
    fixes.set(exprOf(template), fixed);
  }
  const frozen = new Set(ctx.completed.map((n) => n.nodeId));
  const { ir, edits } = replaceTemplatesInWorkflow(ctx.workflow, fixes, frozen);
  return edits.length === 0 ? undefined : { ir, edits };
}

/** Templates of the failed node (or of the outputs, when no node failed) that do not resolve now. */
function unresolvedNow(ctx: RepairContext, nodeId: string | undefined): string[] {
  const node = ctx.workflow.nodes.find((n) => n.id === nodeId);
  const value = node === undefined ? Object.values(ctx.workflow.outputs).map((o) => o.source) : node.params;
  const context = runtimeContext(ctx);
  return findTemplates(value)
    .map((ref) => `\${${ref.expr}}`)
    .filter((template) => {
      try {
        resolveValue(template, context);
        return false;
      } catch {
        return true;
      }
    });
}

/** Param names that the node's type does not know, renamed to the one known name each is a typo of. */
function fixParamNames(workflow: Workflow, ctx: RepairContext, only?: string): RuleFix {
  let ir = workflow;
  const edits: RuleEdit[] = [];
  workflow.nodes.forEach((node, index) => {
    if (only !== undefined && node.id !== only) return;
    const spec = ctx.catalog.get(node.type);
    if (spec === undefined) return;
    const known = Object.keys(spec.paramsSchema.shape);
    for (const key of Object.keys(node.params)) {
      if (known.includes(key)) continue;
      const to = uniqueNearKey(
        key,
        known.filter((k) => !Object.hasOwn(node.params, k)),
      );
      if (to === undefined) continue;
      ir = renameParam(ir, index, key, to);
      edits.push({ path: `nodes[${index}].params`, before: key, after: to });
    }
  });
  return { ir, edits };
}

/** Unknown node types, edge ends and start node that are typos of exactly one known name. */
function fixNames(workflow: Workflow, ctx: RepairContext): RuleFix {
  const edits: RuleEdit[] = [];
  const types = [...ctx.catalog.keys()];
  const nodes = workflow.nodes.map((node, i) => {
    if (ctx.catalog.has(node.type)) return node;
    const type = uniqueNearKey(node.type, types);
    if (type === undefined) return node;
    edits.push({ path: `nodes[${i}].type`, before: node.type, after: type });
    return { ...node, type };
  });
  const ids = nodes.map((n) => n.id);
  const fixId = (id: string, path: string): string => {
    if (ids.includes(id)) return id;
    const to = uniqueNearKey(id, ids);
    if (to === undefined) return id;
    edits.push({ path, before: id, after: to });
    return to;
  };
  const edges = workflow.edges.map((edge, j) => ({ ...edge, from: fixId(edge.from, `edges[${j}].from`), to: fixId(edge.to, `edges[${j}].to`) }));
  const startNode = workflow.start_node === undefined ? undefined : fixId(workflow.start_node, 'start_node');
  return { ir: { ...workflow, nodes, edges, ...(startNode === undefined ? {} : { start_node: startNode }) }, edits };
}

/** Templates naming an unknown node or input, or an output key the node type does not declare. */
function fixStaticTemplates(workflow: Workflow, ctx: RepairContext): RuleFix {
  const outputKeys = new Map(workflow.nodes.map((n) => [n.id, ctx.catalog.get(n.type)?.outputKeys] as const));
  const inputNames = Object.keys(workflow.inputs);
  const fixes = new Map<string, string>();
  const sources = [...workflow.nodes.map((n) => n.params), ...Object.values(workflow.outputs).map((o) => o.source)];
  for (const ref of findTemplates(sources)) {
    const fixed = fixTemplateStatically(ref.expr, outputKeys, inputNames);
    if (fixed !== undefined) fixes.set(ref.expr, fixed);
  }
  return replaceTemplatesInWorkflow(workflow, fixes, new Set());
}

/**
 * Deterministic repairs, no LLM: typos and wrong case in template paths (checked against real outputs at
 * run time, declared output keys before), paths one level too deep or shallow, typo'd param names, node
 * types and edge ends. Each applies only when exactly one fix fits. Undefined when nothing was fixed.
 */
export function applyRules(ctx: RepairContext): RuleFix | undefined {
  if (ctx.failure.kind === 'static') {
    const steps = [fixNames, fixParamNames, fixStaticTemplates] as const;
    let ir = ctx.workflow;
    const edits: RuleEdit[] = [];
    for (const step of steps) {
      const result = step(ir, ctx);
      ir = result.ir;
      edits.push(...result.edits);
    }
    return edits.length === 0 ? undefined : { ir, edits };
  }
  const { error } = ctx.failure;
  if (error.code === 'TEMPLATE_UNRESOLVED') {
    const listed = stringList(error.details?.unresolved);
    return fixUnresolvedTemplates(ctx, listed.length > 0 ? listed : unresolvedNow(ctx, error.node_id));
  }
  if (error.code === 'PARAMS_INVALID' && error.node_id !== undefined) {
    const result = fixParamNames(ctx.workflow, ctx, error.node_id);
    return result.edits.length === 0 ? undefined : result;
  }
  return undefined;
}

/** One sentence saying what the rules changed. */
export const describeRuleFix = (fix: RuleFix): string => `Deterministic repair: ${fix.edits.map(editLine).join('; ')}`;
