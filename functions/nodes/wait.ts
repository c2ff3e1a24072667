import {
  type NodeTypeSpec,
  WAIT_FOR_EVENT_OUTPUT_KEYS,
  WAIT_FOR_EVENT_TYPE,
  WAIT_OUTPUT_KEYS,
  WAIT_TYPE,
  WaitForEventParamsSchema,
  WaitParamsSchema,
} from '../core/index.ts';

/**
 * `wait` and `wait-for-event` (DESIGN 7b): specs without a runner. The engine pauses the run itself
 * (functions/core/waits), so they have no RunNode state and no Lambda, and nothing runs while they wait.
 */
export const waitNodeSpec: NodeTypeSpec = {
  type: WAIT_TYPE,
  get paramsSchema() {
    return WaitParamsSchema.unwrap();
  },
  outputKeys: WAIT_OUTPUT_KEYS,
  sideEffects: () => false,
  // The node holds no Task while it waits: the execution ends and a wake-up starts the next one.
  timeoutS: () => 1,
};

export const waitForEventNodeSpec: NodeTypeSpec = {
  type: WAIT_FOR_EVENT_TYPE,
  get paramsSchema() {
    return WaitForEventParamsSchema.unwrap();
  },
  outputKeys: WAIT_FOR_EVENT_OUTPUT_KEYS,
  sideEffects: () => false,
  timeoutS: () => 1,
};
