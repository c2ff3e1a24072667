import { simpleKeys } from './jsonpath-simple-paths.ts';

/**
 * What `JSONPath({ path, json, wrap: false })` answers, for a simple path (`$.a.b`, as every path of the
 * definition is) read without the library: its constructor builds an instance and throws each scalar
 * result out of itself to hand it back (jsonpath-scalars.ts), ~2-4 us a read, and a step reads ~24 (each
 * Choice rule of Route, the Task paths). The answer is the library's for such a path: it follows a key only
 * when `value && Object.hasOwn(value, key)` (strings and arrays too), gives back the value itself (wrap
 * false), and `undefined` for no match or a falsy `json`. Any other call goes to `library`.
 *
 * The CLI's bundles route aws-local-stepfunctions's `jsonPathQuery` through this (scripts/interpreter-patches.mjs);
 * run from source, the interpreter calls the library itself. A test holds the two to the same answers.
 */
export const directJsonPath = (options: unknown, library: (options: never) => unknown): unknown => {
  if (typeof options !== 'object' || options === null) return library(options as never);
  const { path, json, wrap } = options as Record<string, unknown>;
  // Any other key stands in for an option of the library's: its case (read as jsonpath-simple-paths.ts reads them, no copy a read).
  for (const key in options) if (key !== 'path' && key !== 'json' && key !== 'wrap') return library(options as never);
  const keys = wrap === false && Object.hasOwn(options, 'json') ? simpleKeys(path) : undefined;
  if (keys === undefined) return library(options as never);
  let value = json;
  if (!value) return undefined;
  for (const key of keys) {
    if (!(value && Object.hasOwn(value, key))) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
};
