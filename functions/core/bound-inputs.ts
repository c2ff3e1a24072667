import type { WorkflowNode } from './ir.ts';
import { isRecord } from './json-text.ts';
import { WORKFLOW_TYPE } from './nested/workflow-params.ts';
import { ITERATION_NAME } from './node-config.ts';
import type { NodeTypeSpec } from './node-type.ts';
import { resolveValue, type TemplateContext } from './templates.ts';

/** Whether a node's type takes `inputs` as a param of its own (the code node: its Python variables). */
const ownsInputs = (spec: NodeTypeSpec | undefined): boolean => spec !== undefined && Object.hasOwn(spec.paramsSchema.shape, 'inputs');

/**
 * Names a node's templates may use besides the workflow's inputs and nodes: pflow's `- inputs:` on a node
 * whose type does not take inputs itself (a shell's `${id}`), a loop's carried inputs and `${__iteration__}`.
 */
export const boundNames = (node: WorkflowNode, spec: NodeTypeSpec | undefined): string[] => {
  const names = node.loop ? [ITERATION_NAME, ...Object.keys(node.loop.carry ?? {})] : [];
  if (node.type !== WORKFLOW_TYPE && !ownsInputs(spec) && isRecord(node.params.inputs)) names.push(...Object.keys(node.params.inputs));
  return names;
};

/**
 * A node's params and template context for one visit: from a loop's second iteration on, `carry` (resolved
 * against the previous iteration's outputs) replaces the inputs it names: a code node's `inputs`, a workflow
 * node's `param_mapping`, or the names a node's `inputs:` adds to its templates. Throws TemplateResolutionError.
 */
export const bindInputs = (
  node: WorkflowNode,
  params: Record<string, unknown>,
  spec: NodeTypeSpec | undefined,
  context: TemplateContext,
  iteration: number,
): { params: Record<string, unknown>; context: TemplateContext } => {
  const carried = iteration > 1 && node.loop?.carry ? (resolveValue(node.loop.carry, context) as Record<string, unknown>) : {};
  const loopNames = node.loop ? { [ITERATION_NAME]: iteration } : {};
  if (node.type === WORKFLOW_TYPE) {
    const mapping = isRecord(params.param_mapping) ? params.param_mapping : {};
    return { params: { ...params, ...(iteration > 1 ? { param_mapping: { ...mapping, ...literal(carried) } } : {}) }, context: extend(context, loopNames) };
  }
  if (ownsInputs(spec)) {
    const inputs = isRecord(params.inputs) ? params.inputs : {};
    return { params: { ...params, ...(iteration > 1 ? { inputs: { ...inputs, ...literal(carried) } } : {}) }, context: extend(context, loopNames) };
  }
  if (!isRecord(params.inputs) && Object.keys(carried).length === 0) return { params, context: extend(context, loopNames) };
  const { inputs, ...rest } = params;
  const bound = isRecord(inputs) ? (resolveValue(inputs, extend(context, loopNames)) as Record<string, unknown>) : {};
  return { params: rest, context: extend(context, { ...bound, ...carried, ...loopNames }) };
};

const extend = (context: TemplateContext, names: Record<string, unknown>): TemplateContext =>
  Object.keys(names).length === 0 ? context : { ...context, inputs: { ...context.inputs, ...names } };

/** A carried value goes into params that are resolved again: its text is escaped so that a `${` in it stays data. */
const literal = (values: Record<string, unknown>): Record<string, unknown> => JSON.parse(JSON.stringify(values).replaceAll('${', '$${'));
