import type jsonata from 'jsonata';
import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { openJsonText } from '../core/index.ts';
import { type TransformParams, TransformParamsSchema, timeoutOf, transformSpec } from './transform-spec.ts';

export { type TransformParams, TransformParamsSchema } from './transform-spec.ts';

const CACHE_LIMIT = 500;
/** Nesting depth of evaluation (about 4 per recursive call): runaway recursion fails with D1011 instead of eating memory. */
const MAX_DEPTH = 100_000;

/** JSONata loads with the first transform node a process runs, not with every local run (CLI start-up). */
let jsonataLoaded: Promise<typeof jsonata> | undefined;
const loadJsonata = (): Promise<typeof jsonata> => (jsonataLoaded ??= import('jsonata').then((m) => m.default));

interface JsonataFailure {
  readonly code?: string;
  readonly message?: string;
  readonly position?: number;
  readonly token?: string;
}

const compiled = new Map<string, jsonata.Expression>();

/** Compiles once per (expression, timeout); a loop or a long run evaluates the same expressions many times. */
const compile = (compiler: typeof jsonata, expression: string, timeoutMs: number): jsonata.Expression => {
  const key = `${timeoutMs}\u0000${expression}`;
  const hit = compiled.get(key);
  if (hit !== undefined) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  const expr = compiler(expression, { timeout: timeoutMs, stack: MAX_DEPTH });
  compiled.set(key, expr);
  if (compiled.size > CACHE_LIMIT) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  return expr;
};

const describeFailure = (expression: string, raw: unknown): { message: string; details: Record<string, unknown> } => {
  const failure: JsonataFailure = typeof raw === 'object' && raw !== null ? (raw as JsonataFailure) : { message: String(raw) };
  const text = failure.message ?? String(raw);
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

/** JSONata returns sequences (arrays with extra flags) and may return functions; keep plain JSON only. */
const isLambda = (value: unknown): boolean =>
  typeof value === 'function' || (typeof value === 'object' && value !== null && ('_jsonata_lambda' in value || '_jsonata_function' in value));

const toJson = (value: unknown): unknown => {
  if (value === undefined || isLambda(value)) return null;
  if (typeof value !== 'object' || value === null) return value;
  return JSON.parse(JSON.stringify(value, (_key, inner: unknown) => (isLambda(inner) ? undefined : inner))) as unknown;
};

const run = async (params: TransformParams): Promise<RunnerResult> => {
  const started = performance.now();
  try {
    const expr = compile(await loadJsonata(), params.expression, timeoutOf(params) * 1000);
    // JSON printed by an upstream node (a shell's stdout) is data here, as pflow reads it for list/dict params.
    const value: unknown = await expr.evaluate(openJsonText(params.input));
    return { kind: 'ok', outputs: { result: toJson(value) }, action: 'default', durationMs: performance.now() - started };
  } catch (error) {
    const { message, details } = describeFailure(params.expression, error);
    return {
      kind: 'failed',
      error: { code: 'TRANSFORM_FAILED', message, details },
      durationMs: performance.now() - started,
    };
  }
};

export const transformRunner: NodeRunner<typeof TransformParamsSchema> = { ...transformSpec, paramsSchema: TransformParamsSchema, run };
