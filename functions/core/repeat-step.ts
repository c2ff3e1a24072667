import type { Advance } from './advance.ts';
import type { Outcome } from './classify.ts';
import { nodeById } from './ir.ts';
import { decideLoop, retryAfter, waitStateSeconds } from './repeat-node.ts';
import type { NodeRecord, RunItem } from './run-model.ts';
import { setLatest } from './run-path.ts';
import type { AdvanceOutcome } from './state-io.ts';

type Current = NonNullable<RunItem['current']>;

const countVisit = (run: RunItem, record: NodeRecord): void => {
  run.metrics.nodesExecuted += 1;
  if (!record.usage) return;
  run.metrics.llmInputTokens += record.usage.input_tokens;
  run.metrics.llmOutputTokens += record.usage.output_tokens;
  run.metrics.llmCostUsd += record.usage.cost_usd;
};

/**
 * After a visit of a node with `retry` or `loop` (pflow's): another try of the same visit after a wait, or
 * the loop's next iteration, each its own record (a checkpoint: a resume goes on at the try or iteration
 * that did not finish). Returns undefined to let the visit route on as any other; a stopping loop's record
 * then carries `loop_stopped`.
 */
export const repeatAfterVisit = async (step: Advance, current: Current, record: NodeRecord, outcome: Outcome): Promise<AdvanceOutcome | undefined> => {
  const { run, ir } = step;
  const node = nodeById(ir, current.nodeId);
  if (!node || (!node.retry && !node.loop)) return undefined;
  const attempt = current.attempt ?? 1;
  const retryInS = retryAfter(node, outcome, attempt);
  if (retryInS !== undefined && outcome.kind !== 'success') {
    await step.writes.stageRecord({ ...record, retried: true, attempt, ...(current.iteration ? { iteration: current.iteration } : {}) });
    delete run.current;
    countVisit(run, record);
    step.writes.event('node_retrying', {
      nodeId: node.id,
      message: outcome.error.message,
      data: { attempt, max: node.retry?.max ?? attempt, waitS: retryInS },
    });
    return step.prepare(node.id, {
      retry: { visit: current.visit, attempt: attempt + 1, waitS: waitStateSeconds(retryInS) },
      ...(current.iteration ? { iteration: current.iteration } : {}),
    });
  }
  if (current.attempt !== undefined) record.attempt = current.attempt;
  if (!node.loop || outcome.kind !== 'success') {
    if (current.iteration !== undefined) record.iteration = current.iteration;
    return undefined;
  }
  const iteration = current.iteration ?? 1;
  record.iteration = iteration;
  const nodes = { ...(await step.referencedOutputs(node.loop)), [node.id]: record.outputs ?? {} };
  const decision = decideLoop(node, iteration, { inputs: run.params, nodes });
  if (decision.kind === 'stop') {
    record.outputs = { ...record.outputs, loop_stopped: decision.stopped };
    return undefined;
  }
  await step.writes.stageRecord(decision.kind === 'again' ? { ...record, loopContinued: true } : record);
  delete run.current;
  countVisit(run, record);
  setLatest(run, node.id, record.seq);
  if (decision.kind === 'error') return step.afterError(node.id, decision.error);
  return step.prepare(node.id, { iteration: iteration + 1 });
};
