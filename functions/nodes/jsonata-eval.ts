import type jsonata from 'jsonata';
import { openJsonText } from '../core/index.ts';
import { bindingsFit, type InlinePlan, inlinePlanOf } from './jsonata-inline.ts';

/**
 * One JSONata evaluation, as the transform node does it in its worker thread (transform-worker.ts) or,
 * where no worker file is shipped, in the caller's thread. The answer is plain JSON, or the failure's
 * fields: both cross a thread boundary as they are.
 */
export interface JsonataRequest {
  readonly expression: string;
  /** As the node got it: text holding JSON is parsed where the expression runs (a string crosses threads cheaper than its objects). */
  readonly input: unknown;
  readonly bindings: Readonly<Record<string, unknown>>;
  readonly timeoutMs: number;
}

export interface JsonataFailure {
  readonly code?: string | undefined;
  readonly message?: string | undefined;
  readonly position?: number | undefined;
  readonly token?: string | undefined;
}

export type JsonataAnswer = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly failure: JsonataFailure };

const CACHE_LIMIT = 500;
/** Nesting depth of evaluation (about 4 per recursive call): runaway recursion fails with D1011 instead of eating memory. */
const MAX_DEPTH = 100_000;

interface Compiled {
  readonly expr: jsonata.Expression;
  /** Decided once, the first time the caller's thread asks (jsonata-inline.ts); `null`: to the worker. */
  plan?: InlinePlan | null;
}

const compiled = new Map<string, Compiled>();

/** Compiles once per (expression, timeout); a loop or a long run evaluates the same expressions many times. */
const compile = (compiler: typeof jsonata, expression: string, timeoutMs: number): Compiled => {
  const key = `${timeoutMs}\u0000${expression}`;
  const hit = compiled.get(key);
  if (hit !== undefined) {
    compiled.delete(key);
    compiled.set(key, hit);
    return hit;
  }
  const entry: Compiled = { expr: compiler(expression, { timeout: timeoutMs, stack: MAX_DEPTH }) };
  compiled.set(key, entry);
  if (compiled.size > CACHE_LIMIT) {
    const oldest = compiled.keys().next().value;
    if (oldest !== undefined) compiled.delete(oldest);
  }
  return entry;
};

/** JSONata returns sequences (arrays with extra flags) and may return functions; keep plain JSON only. */
const isLambda = (value: unknown): boolean =>
  typeof value === 'function' || (typeof value === 'object' && value !== null && ('_jsonata_lambda' in value || '_jsonata_function' in value));

const toJson = (value: unknown): unknown => {
  if (value === undefined || isLambda(value)) return null;
  if (typeof value !== 'object' || value === null) return value;
  return JSON.parse(JSON.stringify(value, (_key, inner: unknown) => (isLambda(inner) ? undefined : inner))) as unknown;
};

const failureOf = (raw: unknown): JsonataFailure => {
  if (typeof raw !== 'object' || raw === null) return { message: String(raw) };
  const { code, message, position, token } = raw as JsonataFailure;
  return { code, message, position, token };
};

const evaluateCompiled = async (expr: jsonata.Expression, request: JsonataRequest): Promise<unknown> => {
  // JSON printed by an upstream node (a shell's stdout) is data here, as pflow reads it for list/dict params.
  const input = openJsonText(request.input);
  return toJson(await expr.evaluate(input, { ...request.bindings }));
};

export const evaluateJsonata = async (compiler: typeof jsonata, request: JsonataRequest): Promise<JsonataAnswer> => {
  try {
    return { ok: true, value: await evaluateCompiled(compile(compiler, request.expression, request.timeoutMs).expr, request) };
  } catch (error) {
    return { ok: false, failure: failureOf(error) };
  }
};

/**
 * The answer evaluated in the caller's thread when the expression's cost is bounded (jsonata-inline.ts),
 * or a syntax error (parsing is linear); `undefined` when the worker must answer.
 */
export const evaluateIfBounded = async (compiler: typeof jsonata, request: JsonataRequest): Promise<JsonataAnswer | undefined> => {
  let entry: Compiled;
  try {
    entry = compile(compiler, request.expression, request.timeoutMs);
  } catch (error) {
    return { ok: false, failure: failureOf(error) };
  }
  if (entry.plan === undefined) entry.plan = inlinePlanOf(entry.expr.ast());
  if (entry.plan === null || !bindingsFit(entry.plan, request.bindings)) return undefined;
  try {
    return { ok: true, value: await evaluateCompiled(entry.expr, request) };
  } catch (error) {
    // A RangeError depends on the thread: its stack (an input nested thousands deep) is not the worker's.
    return error instanceof RangeError ? undefined : { ok: false, failure: failureOf(error) };
  }
};
