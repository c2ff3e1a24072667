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
