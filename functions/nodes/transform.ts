import type jsonata from 'jsonata';
import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { evaluateIfBounded, evaluateJsonata, type JsonataAnswer, type JsonataFailure, type JsonataRequest } from './jsonata-eval.ts';
import { evaluateInWorker } from './jsonata-worker.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { type TransformParams, TransformParamsSchema, timeoutOf, transformSpec } from './transform-spec.ts';

export { type TransformParams, TransformParamsSchema } from './transform-spec.ts';

/** JSONata loads with the first transform a process runs, not at every start. */
let compiler: typeof jsonata | undefined;
const loadJsonata = async (): Promise<typeof jsonata> => {
  compiler ??= (await import('jsonata')).default;
  return compiler;
};

/**
 * In the caller's thread when the expression's cost is bounded by its size x the input's (jsonata-inline.ts):
 * the hop to a worker cost ~0.12 ms of this thread's CPU per step. Anything else goes to a worker a timeout
 * can end, or, where no worker file is shipped (a Lambda bundle), evaluates here too.
 */
const evaluate = async (request: JsonataRequest): Promise<JsonataAnswer> => {
  const here = compiler ?? (await loadJsonata());
  return (await evaluateIfBounded(here, request)) ?? (await (evaluateInWorker(request) ?? evaluateJsonata(here, request)));
};

const describeFailure = (expression: string, failure: JsonataFailure): { message: string; details: Record<string, unknown> } => {
  const text = failure.message ?? 'failed';
  const where: string[] = [];
  if (typeof failure.position === 'number') {
    const start = Math.max(0, failure.position - 20);
    where.push(`at position ${failure.position} near "${expression.slice(start, failure.position + 20)}"`);
  }
  if (failure.token !== undefined) where.push(`token "${failure.token}"`);
  return {
    message: `JSONata ${failure.code ?? 'error'}: ${text}${where.length > 0 ? ` (${where.join(', ')})` : ''}`,
    details: {
      expression,
      jsonata_code: failure.code,
      position: failure.position,
      token: failure.token,
    },
  };
};

const run = async (params: TransformParams): Promise<RunnerResult> => {
  const started = monotonicMs();
  const request: JsonataRequest = {
    expression: params.expression,
    input: params.input,
    bindings: params.bindings ?? {},
    timeoutMs: timeoutOf(params) * 1000,
  };
  const answer = await evaluate(request);
  if (answer.ok) return { kind: 'ok', outputs: { result: answer.value }, action: 'default', durationMs: monotonicMs() - started };
  const { message, details } = describeFailure(params.expression, answer.failure);
  return { kind: 'failed', error: { code: 'TRANSFORM_FAILED', message, details }, durationMs: monotonicMs() - started };
};

export const transformRunner: NodeRunner<typeof TransformParamsSchema> = { ...transformSpec, paramsSchema: TransformParamsSchema, run };
