import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { evaluateJsonata, type JsonataAnswer, type JsonataFailure, type JsonataRequest } from './jsonata-eval.ts';
import { evaluateInWorker } from './jsonata-worker.ts';
import { type TransformParams, TransformParamsSchema, timeoutOf, transformSpec } from './transform-spec.ts';

export { type TransformParams, TransformParamsSchema } from './transform-spec.ts';

/** JSONata loads with the first transform a process runs in its own thread (no worker file), not at every start. */
const evaluateHere = async (request: JsonataRequest): Promise<JsonataAnswer> => evaluateJsonata((await import('jsonata')).default, request);

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
  const started = performance.now();
  const request: JsonataRequest = {
    expression: params.expression,
    input: params.input,
    bindings: params.bindings ?? {},
    timeoutMs: timeoutOf(params) * 1000,
  };
  const answer = await (evaluateInWorker(request) ?? evaluateHere(request));
  if (answer.ok) return { kind: 'ok', outputs: { result: answer.value }, action: 'default', durationMs: performance.now() - started };
  const { message, details } = describeFailure(params.expression, answer.failure);
  return { kind: 'failed', error: { code: 'TRANSFORM_FAILED', message, details }, durationMs: performance.now() - started };
};

export const transformRunner: NodeRunner<typeof TransformParamsSchema> = { ...transformSpec, paramsSchema: TransformParamsSchema, run };
