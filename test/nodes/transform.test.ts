import { describe, expect, it } from 'vitest';
import type { RunnerResult } from '../../functions/core/node-type.ts';
import { TransformParamsSchema, transformRunner } from '../../functions/nodes/transform.ts';

const context = { runId: 'run-1', nodeId: 'tx', seq: 1, cacheKey: 'k' };
const run = (params: Record<string, unknown>): Promise<RunnerResult> => transformRunner.run(TransformParamsSchema.parse(params), context);
const resultOf = async (expression: string, input?: unknown): Promise<unknown> => {
  const outcome = await run({ expression, input });
  if (outcome.kind !== 'ok') throw new Error(`expected ok, got ${outcome.error.message}`);
  return outcome.outputs.result;
};
const failureOf = async (params: Record<string, unknown>) => {
  const outcome = await run(params);
  if (outcome.kind !== 'failed') throw new Error('expected a failure');
  return outcome.error;
};

/** How many 20 ms timers fired while `work` ran: a blocked event loop fires none until it ends. */
const ticking = async <T>(work: () => Promise<T>): Promise<{ value: T; ticks: number }> => {
  let ticks = 0;
  const ticker = setInterval(() => (ticks += 1), 20);
  try {
    return { value: await work(), ticks };
  } finally {
    clearInterval(ticker);
  }
};

const orders = {
  items: [
    { name: 'pen', price: 2, qty: 10 },
    { name: 'lamp', price: 30, qty: 1 },
    { name: 'desk', price: 120, qty: 2 },
  ],
};

describe('transformRunner', () => {
  it('returns the input itself for $', async () => {
    expect(await resultOf('$', { a: [1, 2], b: 'x' })).toEqual({ a: [1, 2], b: 'x' });
  });

  it('maps, filters and aggregates', async () => {
    expect(await resultOf('items.name', orders)).toEqual(['pen', 'lamp', 'desk']);
    expect(await resultOf('items[price > 10].name', orders)).toEqual(['lamp', 'desk']);
    expect(await resultOf('$sum(items.(price * qty))', orders)).toBe(290);
    expect(await resultOf('items{name: price}', orders)).toEqual({ pen: 2, lamp: 30, desk: 120 });
    expect(await resultOf('$map(items, function($i) { $uppercase($i.name) })', orders)).toEqual(['PEN', 'LAMP', 'DESK']);
  });

  it('works on a top-level array input', async () => {
    expect(await resultOf('$count($)', [1, 2, 3])).toBe(3);
    expect(await resultOf('$[$ > 1]', [1, 2, 3])).toEqual([2, 3]);
  });

  it('returns plain JSON arrays, not JSONata sequences', async () => {
    const result = await resultOf('items.qty', orders);
    expect(Array.isArray(result)).toBe(true);
    expect(Object.keys(result as object)).toEqual(['0', '1', '2']);
  });

  it('turns an undefined result into null', async () => {
    expect(await resultOf('missing.path', { a: 1 })).toBeNull();
    expect(await resultOf('$', undefined)).toBeNull();
  });

  it('turns a function result into null', async () => {
    expect(await resultOf('function($x) { $x }', {})).toBeNull();
    expect(await resultOf('{"f": function($x) { $x }, "n": 1}', {})).toEqual({ n: 1 });
  });

  it('reports a syntax error with its position', async () => {
    const error = await failureOf({ expression: 'items[price > 10', input: orders });
    expect(error.code).toBe('TRANSFORM_FAILED');
    expect(error.message).toContain('S0203');
    expect(error.message).toContain('Expected "]" before end of expression');
    expect(error.message).toContain('at position 16');
    expect(error.details).toMatchObject({ jsonata_code: 'S0203', position: 16, expression: 'items[price > 10' });
  });

  it('reports an evaluation error with its position and token', async () => {
    const error = await failureOf({ expression: 'items[0].name + 1', input: orders });
    expect(error.code).toBe('TRANSFORM_FAILED');
    expect(error.message).toContain('must evaluate to a number');
    expect(error.details).toMatchObject({ jsonata_code: 'T2001', token: '+' });
  });

  it('stops runaway recursion and long evaluations, while the event loop goes on', async () => {
    const deep = await ticking(() => failureOf({ expression: '($f := function($n) { 1 + $f($n + 1) }; $f(0))', input: null }));
    expect(deep.value.details).toMatchObject({ jsonata_code: 'D1011' });
    expect(deep.ticks).toBeGreaterThanOrEqual(5);
    const slow = await ticking(() => failureOf({ expression: '($f := function($n) { $f($n + 1) }; $f(0))', input: null, timeout_s: 0.2 }));
    expect(slow.value.details).toMatchObject({ jsonata_code: 'D1012' });
  });

  it('stops a huge $pad at timeout_s, while the event loop goes on', async () => {
    // 300 million characters: one call, 0.45-0.55 s in a worker on one 2-core machine here and 14 s on another, and
    // as long a freeze in the caller's thread. A timeout of 0.5 s let the faster machine finish it.
    const { value, ticks } = await ticking(() => failureOf({ expression: '$pad("", 300000000)', input: null, timeout_s: 0.2 }));
    expect(value.details).toMatchObject({ jsonata_code: 'D1012' });
    expect(ticks).toBeGreaterThanOrEqual(5);
  });

  it('stops a backtracking regular expression at timeout_s, while the event loop goes on', async () => {
    // One JavaScript regex call: JSONata's own timeout, checked between its steps, never gets a turn.
    const { value: error, ticks } = await ticking(() => failureOf({ expression: '$match($, /^(a+)+$/)', input: `${'a'.repeat(34)}!`, timeout_s: 0.5 }));
    expect(error.details).toMatchObject({ jsonata_code: 'D1012' });
    expect(error.message).toContain('timeout_s (0.5 s)');
    expect(ticks).toBeGreaterThanOrEqual(5);
    // The worker that was ended is replaced: the next transform runs.
    expect(await resultOf('$ + 1', 1)).toBe(2);
  });

  it('reads bindings as variables', async () => {
    const outcome = await run({ expression: 'items[price > $min].name', input: orders, bindings: { min: 25 } });
    expect(outcome).toMatchObject({ kind: 'ok', outputs: { result: ['lamp', 'desk'] } });
  });

  it('evaluates the same cached expression concurrently against different inputs', async () => {
    const inputs = Array.from({ length: 50 }, (_, i) => ({ n: i }));
    const results = await Promise.all(inputs.map((input) => resultOf('n * 2', input)));
    expect(results).toEqual(inputs.map(({ n }) => n * 2));
  });
});

describe('transform node type spec', () => {
  it('has no side effects, outputs result and times out after 30 s by default', () => {
    expect(transformRunner.type).toBe('transform');
    expect(transformRunner.sideEffects({ expression: '$' })).toBe(false);
    expect(transformRunner.outputKeys).toEqual(['result']);
    expect(transformRunner.timeoutS({ expression: '$' })).toBe(30);
    expect(transformRunner.timeoutS({ expression: '$', timeout_s: 3 })).toBe(3);
  });

  it('requires an expression, defaults input to null and rejects unknown params', () => {
    expect(TransformParamsSchema.parse({ expression: '$' })).toEqual({ expression: '$', input: null });
    const issues = TransformParamsSchema.safeParse({ input: 1, expr: 'x' }).error?.issues ?? [];
    expect(issues.map((i) => i.message).join('\n')).toContain('expression is required');
    expect(issues.some((i) => i.code === 'unrecognized_keys')).toBe(true);
  });
});

describe('transform input holding JSON text', () => {
  it('reads a string holding a JSON array or object as data, and leaves other strings alone', async () => {
    const ctx = { runId: 'r', nodeId: 'n', seq: 1, cacheKey: 'k' };
    const sum = await transformRunner.run({ expression: '$sum($)', input: '[1, 2, 3]\n' }, ctx);
    expect(sum).toMatchObject({ kind: 'ok', outputs: { result: 6 } });
    const field = await transformRunner.run({ expression: 'user.name', input: '{"user":{"name":"ada"}}' }, ctx);
    expect(field).toMatchObject({ kind: 'ok', outputs: { result: 'ada' } });
    const text = await transformRunner.run({ expression: '$uppercase($)', input: '42 apples' }, ctx);
    expect(text).toMatchObject({ kind: 'ok', outputs: { result: '42 APPLES' } });
  });
});
