import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { evaluateIfBounded, evaluateJsonata, type JsonataRequest } from '../../functions/nodes/jsonata-eval.ts';
import { evaluateInWorker } from '../../functions/nodes/jsonata-worker.ts';

const orders = {
  items: [
    { name: 'pen', price: 2, qty: 10, tags: ['office', 'cheap'] },
    { name: 'lamp', price: 30, qty: 1, tags: ['home'] },
    { name: 'desk', price: 120, qty: 2, tags: [] },
  ],
  customer: { name: 'Ada', address: { city: 'London' } },
};

type Case = [expression: string, input?: unknown, bindings?: Record<string, unknown>];

/** Evaluated in the caller's thread: results and errors alike. */
const bounded: Case[] = [
  ['$'],
  ['items.name'],
  ['items[price > 10].name'],
  ['items[0].name'],
  ['items[-1]'],
  ['items[price > $min].name', orders, { min: 25 }],
  ['items.tags'],
  ['items.tags[]'],
  ['customer.address.city'],
  ['items.$'],
  ['$.items[qty = 1]'],
  ['$sum(items.(price * qty))'],
  ['$count($)', [1, 2, 3]],
  ['$[$ > 1]', [1, 2, 3]],
  ['items.[name, price * qty, $uppercase(name) & "!"]'],
  ['{"names": items.name, "count": $count(items), "max": $max(items.price), "avg": $average(items.price)}'],
  ['[items[0].name, customer.name, 1, "two", true, null]'],
  ['items.[name, price]'],
  ['$string(customer)'],
  ['$string(items.price)'],
  ['$join(items.name, ", ")'],
  ['$join(items.name)'],
  ['$keys(customer)'],
  ['$lookup(customer, "name")'],
  ['$merge([customer.address, {"zip": "N1"}])'],
  ['$append(items.name, ["chair"])'],
  ['$type(items)'],
  ['$substring(customer.name, 1, 2)'],
  ['$length(customer.name) + $round(2.567, 2) + $floor(1.5) + $ceil(1.5) + $abs(-3)'],
  ['$trim("  a  b  ") & $lowercase("X")'],
  ['$number("42") + 1'],
  ['$boolean(items) and $not(false) and $exists(customer.name)'],
  ['$min(items.price) < 3 ? "cheap" : "dear"'],
  ['missing ?: "default"'],
  ['missing ?? "default"'],
  ['"lamp" in items.name'],
  ['-items[0].price % 7 / 2'],
  ['customer = customer'],
  ['(items.name; customer.name)'],
  ['missing.path'],
  ['$__flowmend_0.items[price > $__flowmend_1].name', null, { __flowmend_0: orders, __flowmend_1: 10 }],
  ['"Hello " & $__flowmend_0', null, { __flowmend_0: '" & $string($$) & "' }],
  ['items.($x)', orders, { x: 'short' }],
  ['user.name', '{"user":{"name":"ada"}}'],
  ['$uppercase($)', '42 apples'],
  ['$sum($)', '[1, 2, 3]\n'],
  ['items[price > 10', orders],
  ['items[0].name + 1'],
  ['-customer.name'],
  ['{customer.address: 1}'],
  ['$substring(1)'],
  ['$number("x")'],
  ['$sum(customer.name)'],
  ['customer.name < 1'],
  ['$keys(1, 2)'],
  ['1 / 0'],
];

/** Sent to the worker: results and errors must still be what they are in the caller's thread. */
const unbounded: Case[] = [
  ['$$.items'],
  ['items.$$.customer'],
  ['items.%.customer.name'],
  ['items{name: price}'],
  ['items.{"n": name, "total": price * qty}'],
  ['nested.{"x": 1}', { nested: [[1, 2, 3]] }],
  ['items[{"a": 1}.a = 1]'],
  ['items^(price).name'],
  ['items@$i.$i.name'],
  ['items#$n.{"n": $n}'],
  ['**.name'],
  ['*.name'],
  ['customer.*'],
  ['[1..5]'],
  ['$map(items, function($i) { $i.price })'],
  ['$filter(items, function($i) { $i.price > 10 }).name'],
  ['$reduce(items.price, function($a, $b) { $a + $b })'],
  ['$sort(items.price)'],
  ['$each(customer, function($v, $k) { $k })'],
  ['$sift(customer, function($v) { $v = "Ada" })'],
  ['($x := 2; $x * 3)'],
  ['items.name ~> $join(",")'],
  ['$pad(customer.name, 8, "-")'],
  ['$replace(customer.name, "a", "b")'],
  ['$match(customer.name, /a/i)'],
  ['$split(customer.name, "")'],
  ['$eval("1 + 1")'],
  ['$contains(customer.name, "d")'],
  ['$string(customer, true)'],
  ['$join(items.name, $sep)', orders, { sep: '|' }],
  ['items.[$, $].name'],
  ['{"a": customer}.a.name'],
  ['$string(items)[0]'],
  ['(items.name)[0]'],
  ['items.$x', orders, { x: { big: 'object' } }],
  ['items.$x', orders, { x: 'x'.repeat(257) }],
  ['$unbound'],
  ['$string(1)', null, { string: 'shadowed' }],
  ['$nope(1)'],
  ['| customer | {"vip": true} |'],
  ['function($x) { $x }'],
  ['$string'],
];

const request = (expression: string, input: unknown = orders, bindings: Record<string, unknown> = {}): JsonataRequest => ({
  expression,
  input,
  bindings,
  timeoutMs: 30_000,
});
const inWorker = (r: JsonataRequest) => {
  const answer = evaluateInWorker(r);
  if (answer === undefined) throw new Error('no worker file: run node scripts/build.mjs first');
  return answer;
};

describe('evaluateIfBounded', () => {
  it.each(bounded)('evaluates %s in the caller thread, as the worker does', async (...c: Case) => {
    const r = request(...c);
    const here = await evaluateIfBounded(jsonata, r);
    expect(here).toBeDefined();
    expect(here).toStrictEqual(await inWorker(r));
  });

  it.each(unbounded)('sends %s to the worker, whose answer is the caller thread one', async (...c: Case) => {
    const r = request(...c);
    expect(await evaluateIfBounded(jsonata, r)).toBeUndefined();
    expect(await inWorker(r)).toStrictEqual(await evaluateJsonata(jsonata, r));
  });

  it('keeps failures whole: code, message, position and token', async () => {
    const answer = await evaluateIfBounded(jsonata, request('items[0].name + 1'));
    expect(answer).toMatchObject({ ok: false, failure: { code: 'T2001', position: 15, token: '+' } });
    expect(await evaluateIfBounded(jsonata, request('items[price > 10'))).toMatchObject({ ok: false, failure: { code: 'S0203', position: 16 } });
  });

  it('decides from the bindings each time: a per-item binding too big goes to the worker', async () => {
    const r = request('items[name = $x]');
    expect(await evaluateIfBounded(jsonata, { ...r, bindings: { x: 'pen' } })).toMatchObject({ ok: true, value: { name: 'pen' } });
    expect(await evaluateIfBounded(jsonata, { ...r, bindings: { x: ['pen'] } })).toBeUndefined();
    expect(await evaluateIfBounded(jsonata, { ...r, bindings: {} })).toBeUndefined();
  });

  it('decides once per compiled expression, refused ones too', async () => {
    let read = 0;
    const counting = ((text: string, options?: jsonata.JsonataOptions) => {
      const expr = jsonata(text, options);
      const ast = expr.ast.bind(expr);
      expr.ast = () => {
        read += 1;
        return ast();
      };
      return expr;
    }) as unknown as typeof jsonata;
    for (const expression of ['$pad("once", 6)', 'items[price > 11].name']) {
      read = 0;
      for (let i = 0; i < 3; i += 1) await evaluateIfBounded(counting, request(expression));
      expect(read).toBe(1);
    }
  });

  it("leaves to the worker an input nested deeper than the caller thread's stack", async () => {
    let deep: unknown = 1;
    for (let i = 0; i < 1_000_000; i += 1) deep = [deep];
    expect(await evaluateIfBounded(jsonata, request('$', deep))).toBeUndefined();
    expect(await evaluateIfBounded(jsonata, request('$count($)', deep))).toMatchObject({ ok: true, value: 1 });
  });
});
