import { expandOutputs } from './blob-store.ts';
import { classifyOutcome, type Outcome } from './classify.ts';
import type { EngineDeps } from './engine-deps.ts';
import type { Workflow } from './ir.ts';
import type { RunnerResult } from './node-type.ts';
import type { NodeRecord, RunError, RunItem } from './run-model.ts';
import type { TaskError } from './state-io.ts';

type InFlight = NonNullable<RunItem['current']>;
/** A runner's `result` or a caught `error` (classified), or a `fatal` error the engine decided (a wait's timeout, a denied gate). */
type RunInput = { seq: number; result?: RunnerResult | undefined; error?: TaskError | undefined; fatal?: RunError };

/** What the runner of the step in flight answered, and how the engine classifies it. */
export const classifyRunInput = async (
  deps: EngineDeps,
  run: RunItem,
  ir: Workflow,
  current: InFlight,
  input: RunInput,
): Promise<{ result: RunnerResult | undefined; outcome: Outcome }> => {
  // A runner that uploaded its outputs returned a reference; the engine works with the outputs themselves.
  const result: RunnerResult | undefined =
    input.result?.outputs && deps.blobs
      ? { ...input.result, outputs: (await expandOutputs(deps.blobs, run.runId, input.seq, input.result.outputs)) ?? {} }
      : input.result;
  const outcome: Outcome = input.fatal
    ? { kind: 'fatal', error: input.fatal }
    : classifyOutcome({
        nodeId: current.nodeId,
        nodeType: current.nodeType,
        capabilities: deps.catalog.get(current.nodeType)?.capabilities ?? {},
        ...(result ? { result } : {}),
        ...(input.error ? { taskError: input.error } : {}),
        ...(ir.classification ? { rules: ir.classification } : {}),
      });
  return { result, outcome };
};

/** The record of the step in flight, from its classified outcome. */
export const nodeRecordOf = (run: RunItem, current: InFlight, outcome: Outcome, result: RunnerResult | undefined, now: number): NodeRecord => ({
  runId: run.runId,
  seq: current.seq,
  nodeId: current.nodeId,
  nodeType: current.nodeType,
  visit: current.visit,
  status: outcome.kind === 'success' ? 'completed' : outcome.kind === 'warning' ? 'warning' : 'failed',
  cacheKey: current.cacheKey,
  sideEffects: current.sideEffects,
  irVersion: run.irVersion,
  action: outcome.kind === 'success' ? outcome.action : 'error',
  startedAt: current.startedAt,
  finishedAt: now,
  durationMs: result?.durationMs ?? now - current.startedAt,
  ...(result?.outputs ? { outputs: result.outputs } : {}),
  ...(outcome.kind !== 'success'
    ? { error: { code: outcome.error.code, message: outcome.error.message, ...(outcome.error.details ? { details: outcome.error.details } : {}) } }
    : {}),
  ...(result?.usage ? { usage: result.usage } : {}),
  ...(current.interrupted ? { interrupted: true } : {}),
  ...(current.repaired ? { repaired: true } : {}),
  ...(current.fromMemo ? { fromMemo: true } : {}),
});
