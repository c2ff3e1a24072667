import { type NodeTypeSpec, WORKFLOW_TYPE, WorkflowParamsSchema, workflowOutputKeys } from '../core/index.ts';
import { waitForEventNodeSpec, waitNodeSpec } from './wait.ts';

/**
 * The `workflow` node (pflow's nested workflow): a spec without a runner. The engine runs it itself as
 * a child run with its own checkpoints (functions/core/nested), so it has no RunNode state and no Lambda.
 */
export const workflowNodeSpec: NodeTypeSpec = {
  type: WORKFLOW_TYPE,
  // A getter: the schema is built when validation or the engine first reads it, not when a Lambda imports the specs.
  get paramsSchema() {
    return WorkflowParamsSchema.unwrap();
  },
  outputKeys: [],
  outputKeysFor: workflowOutputKeys,
  // Its child's nodes may change the world; a completed child is never run again with other inputs.
  sideEffects: () => true,
  // The node itself waits for nothing: each node of the child has its own timeout.
  timeoutS: () => 1,
};

/** The node types the engine runs without a runner, added to every catalog the engine and validation use. */
export const engineNodeSpecs: readonly NodeTypeSpec[] = [workflowNodeSpec, waitNodeSpec, waitForEventNodeSpec];
