import type { WorkflowNode } from '../ir.ts';
import { builtOnFirstUse } from '../lazy-schema.ts';
import * as z from '../zod.ts';

/** The node type the engine runs itself, as a child run (no runner, no RunNode state). */
export const WORKFLOW_TYPE = 'workflow';
export const DEFAULT_MAX_NESTING = 10;
/** The error of a workflow node (or a batch item of one) whose child run failed: not repairable in the parent. */
export const CHILD_RUN_FAILED = 'ChildRunFailed';

/**
 * pflow's storage modes. A child is its own run with its own records, so only `mapped` (inputs from
 * `param_mapping`, outputs through `output_mapping`) has a meaning here; the others are refused by name.
 */
export const STORAGE_MODE_REFUSALS: Readonly<Record<string, string>> = {
  isolated: "a child run already starts with nothing but its inputs; use 'mapped' (the default) and pass what it needs in param_mapping",
  scoped: "a child run cannot read the parent's records; pass what it needs in param_mapping and use 'mapped' (the default)",
  shared: "a child run cannot write into the parent's records (each run has its own checkpoints); use 'mapped' and output_mapping",
};

/**
 * Params of a `workflow` node. `workflow_ref`/`workflow_name` are resolved by the host before the run
 * is created (the CLI reads files, the API its registry): the child's IR is frozen into `workflow_ir`
 * beside the ref, so a resume or a repair never reads the file again.
 */
export const WorkflowParamsSchema = builtOnFirstUse(() =>
  z.object({
    workflow_ref: z.optional(z.string().check(z.minLength(1, 'workflow_ref is a path to a workflow file, relative to this workflow'))),
    workflow_name: z.optional(z.string().check(z.minLength(1, 'workflow_name is the name of a registered workflow'))),
    workflow_ir: z.optional(z.record(z.string(), z.unknown())),
    /** Child input name -> value (templates over the parent's inputs and nodes). */
    param_mapping: z._default(z.record(z.string(), z.unknown()), {}),
    /** Child output name -> key of this node's outputs. Absent: every output of the child, by its own name. */
    output_mapping: z.optional(z.record(z.string(), z.string().check(z.minLength(1, 'an output_mapping value is the key this node outputs')))),
    storage_mode: z._default(z.enum(['mapped', 'isolated', 'scoped', 'shared']), 'mapped'),
    max_depth: z._default(z.int().check(z.gte(1), z.lte(100)), DEFAULT_MAX_NESTING),
    /** The action the node takes when its child run fails (pflow's `error_action`). */
    error_action: z._default(z.string().check(z.minLength(1)), 'error'),
  }),
);
export type WorkflowParams = z.infer<typeof WorkflowParamsSchema>;

/**
 * A node's params as the parent's templates see them: the child's IR is the child's own text (its
 * `${...}` name the child's inputs and nodes), so the parent neither resolves nor checks it.
 */
export const templatedParams = (node: Pick<WorkflowNode, 'type' | 'params'>): Record<string, unknown> => {
  if (node.type !== WORKFLOW_TYPE || !Object.hasOwn(node.params, 'workflow_ir')) return node.params;
  const { workflow_ir: _child, ...rest } = node.params;
  return rest;
};
