import { JSONPath } from 'jsonpath-plus';

/** Where the patched `evaluate` keeps the library's own: global, so a second copy of this module finds it. */
const LIBRARY = Symbol.for('flowmend.jsonpath-plus.evaluate');

/** The fields of a jsonpath-plus instance that `evaluate` reads or sets. */
type EvaluateSelf = Record<string, unknown>;
type Evaluate = (this: EvaluateSelf, expr?: unknown, json?: unknown, callback?: unknown, otherTypeCallback?: unknown) => unknown;
type Patched = Evaluate & { [LIBRARY]?: Evaluate };

/** `$.a.b.c` of plain identifiers: the paths the definition reads (core/definition.ts), `$$.x` after its `$` is cut. */
const SIMPLE_PATH = /^\$(?:\.[A-Za-z_][A-Za-z0-9_]*)+$/;
/** Keys of a simple path, by path; bounded, as a definition has a few dozen paths. */
const keysOf = new Map<string, readonly string[]>();
const KEYS_KEPT = 256;

export const simpleKeys = (path: unknown): readonly string[] | undefined => {
  if (typeof path !== 'string') return undefined;
  const known = keysOf.get(path);
  if (known !== undefined || !SIMPLE_PATH.test(path)) return known;
  const keys = path.slice(2).split('.');
  if (keysOf.size < KEYS_KEPT) keysOf.set(path, keys);
  return keys;
};

const NOT_SIMPLE = Symbol('not simple');

/**
 * jsonpath-plus's `evaluate` for a simple path, `{ path, json }` as its constructor passes them, with the
 * instance's `resultType` 'value' and no callback: what the library returns (its `_trace` follows a key only
 * when `val && Object.hasOwn(val, key)`, for strings and arrays too; no match is `[]` wrapped, `undefined`
 * bare; a falsy `json` is `undefined` either way; `flatten` spreads an array match), without the library's
 * path array, trace records and result reduce. Anything else is NOT_SIMPLE: the caller asks the library.
 */
const evaluateSimple = (self: EvaluateSelf, expr: unknown, callback: unknown, otherTypeCallback: unknown): unknown => {
  if (typeof expr !== 'object' || expr === null || callback || self.callback || self.resultType !== 'value') return NOT_SIMPLE;
  const options = expr as Record<string, unknown>;
  if (!Object.hasOwn(options, 'json')) return NOT_SIMPLE;
  // Any other key (wrap, resultType, callback, ...) would stand in for the instance's option: the library's case.
  for (const key in options) if (key !== 'path' && key !== 'json') return NOT_SIMPLE;
  const keys = simpleKeys(options.path);
  if (keys === undefined) return NOT_SIMPLE;
  // The state `evaluate` leaves on the instance, as the library sets it.
  self.currResultType = self.resultType;
  self.currEval = self.eval;
  self.currSandbox = self.sandbox;
  self.currOtherTypeCallback = otherTypeCallback || self.otherTypeCallback;
  let value = options.json;
  if (!value) return undefined;
  self._hasParentSelector = null;
  for (const key of keys) {
    if (!(value && Object.hasOwn(value, key))) return self.wrap ? [] : undefined;
    value = (value as Record<string, unknown>)[key];
  }
  if (!self.wrap) return value;
  return self.flatten && Array.isArray(value) ? ([] as unknown[]).concat(value) : [value];
};

const withSimplePaths = (library: Evaluate): Patched => {
  const patched: Patched = function (this: EvaluateSelf, expr, json, callback, otherTypeCallback) {
    const value = evaluateSimple(this, expr, callback, otherTypeCallback);
    return value !== NOT_SIMPLE ? value : library.call(this, expr, json, callback, otherTypeCallback);
  };
  patched[LIBRARY] = library;
  return patched;
};

/** Instances as aws-local-stepfunctions makes them (`JSONPath({ path, json, wrap: false })`), started by hand. */
const PROBE_OPTIONS: readonly object[] = [{ wrap: false }, { wrap: true, flatten: true }];
/** One path (each new one costs the library a parse, ~0.3 ms cold, at start-up): keys own or not, of strings, arrays, null. */
const PROBE_PATH = '$.a.length';
const PROBE_JSON: readonly unknown[] = [{ a: 'abc' }, { a: { length: [1, [2]] } }, { a: {} }, { a: null }, { a: Object.create({ length: 1 }) }, null];

const sameAnswer = (a: unknown, b: unknown): boolean =>
  Array.isArray(a) && Array.isArray(b) ? a.length === b.length && a.every((x, i) => Object.is(x, b[i])) : Object.is(a, b);

const agrees = (library: Evaluate, patched: Evaluate): boolean =>
  PROBE_OPTIONS.every((options) =>
    PROBE_JSON.every((json) => {
      const make = () => new (JSONPath as unknown as new (o: object) => EvaluateSelf)({ ...options, autostart: false });
      try {
        return sameAnswer(library.call(make(), { path: PROBE_PATH, json }), patched.call(make(), { path: PROBE_PATH, json }));
      } catch {
        return false;
      }
    }),
  );

/**
 * aws-local-stepfunctions reads every Choice `Variable`, and every path of a Task's Parameters, through
 * jsonpath-plus: 24 reads for a transform step (Route tries each node type's rule in order). The library's
 * general evaluator (a path array copied from its cache, a trace record and a path copy per key, a filter
 * and a reduce) was ~15 us of the ~60 us a step spent in those reads (CPU profiles of 1,000-node runs; the
 * rest is the library's constructor throwing each scalar out, which aws-local-stepfunctions's own binding
 * of `JSONPath` keeps out of reach). The definition's paths are all `$.a.b` (core/definition.ts), so this
 * puts `evaluateSimple` in front of `JSONPath.prototype.evaluate`, which the library's constructor calls;
 * every other path and option goes to the library's own.
 *
 * It applies only when the library answers a few probes as `evaluateSimple` does, and tells whether it
 * applied (a test compares both over the definition's paths). Idempotent.
 */
export const makeSimplePathsCheap = (): boolean => {
  const prototype = JSONPath.prototype as unknown as { evaluate: Patched };
  const current = prototype.evaluate;
  if (typeof current !== 'function') return false;
  if (current[LIBRARY]) return true;
  const patched = withSimplePaths(current);
  if (!agrees(current, patched)) return false;
  prototype.evaluate = patched;
  return true;
};

/** jsonpath-plus's own `evaluate`, whether or not `makeSimplePathsCheap` applied (for tests). */
export const libraryEvaluate = (): Evaluate => {
  const current = (JSONPath.prototype as unknown as { evaluate: Patched }).evaluate;
  return current[LIBRARY] ?? current;
};
