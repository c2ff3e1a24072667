import type { NodeRunner, RunContext, RunnerResult } from '../../functions/core/node-type.ts';
import { makeRunNodeHandler } from '../../functions/hosts/lambda/run-node.ts';

/**
 * Runs a runner on raw params as the RunNode handler does: params its schema refuses come back as the
 * handler's PARAMS_INVALID result (through the real handler); parsed ones go to `run` with the context.
 */
export const runWithParams = async (runner: NodeRunner, params: Record<string, unknown>, context: RunContext): Promise<RunnerResult> => {
  const parsed = runner.paramsSchema.safeParse(params);
  if (parsed.success) return runner.run(parsed.data, context);
  return makeRunNodeHandler(runner)({
    kind: 'run',
    runId: context.runId,
    owner: 'test-owner',
    seq: context.seq,
    node: { id: context.nodeId, type: runner.type, params, cacheKey: context.cacheKey, timeoutS: runner.timeoutS(params) },
  });
};

/** The outputs of a result that must be ok; throws with the error otherwise. */
export const okOutputs = (result: RunnerResult): Record<string, unknown> => {
  if (result.kind !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(result.error)}`);
  return result.outputs;
};

/** The error of a result that must have failed; throws with the outputs otherwise. */
export const failureOf = (result: RunnerResult) => {
  if (result.kind !== 'failed') throw new Error(`expected failed, got ${JSON.stringify(result.outputs)}`);
  return result.error;
};
