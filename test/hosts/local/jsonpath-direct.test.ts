import { existsSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { JSONPath } from 'jsonpath-plus';
import { describe, expect, it } from 'vitest';
import { buildDefinition } from '../../../functions/core/definition.ts';
import { directJsonPath } from '../../../functions/hosts/local/jsonpath-direct.ts';

// The CLI's bundles read aws-local-stepfunctions's paths through directJsonPath (scripts/interpreter-patches.mjs):
// it must answer exactly what the library answers, or a Choice would route differently once bundled.

const library = (options: object): unknown => (JSONPath as unknown as (o: object) => unknown)(options);
const direct = (options: object): unknown => directJsonPath(options, library as (o: never) => unknown);

const outcome = (read: () => unknown): { value: unknown } | { threw: true } => {
  try {
    return { value: read() };
  } catch {
    return { threw: true };
  }
};

/** The same answer: the same value (objects by identity), for the library's own arrays of matches an equal one, or a throw for a throw. */
const agree = (options: object): void => {
  const [mineOutcome, theirsOutcome] = [outcome(() => direct(options)), outcome(() => library(options))];
  expect('threw' in mineOutcome).toBe('threw' in theirsOutcome);
  if (!('value' in mineOutcome) || !('value' in theirsOutcome)) return;
  const [mine, theirs] = [mineOutcome.value, theirsOutcome.value];
  if (Array.isArray(theirs) && !Object.is(mine, theirs)) expect(mine).toEqual(theirs);
  else expect(Object.is(mine, theirs), `${(options as { path: string }).path}: another answer than the library's`).toBe(true);
};

const simplePath = fc
  .array(fc.constantFrom('a', 'b', 'kind', 'node', 'type', 'length', 'constructor', '__proto__', 'toString', 'waitS', '_x1'), { minLength: 1, maxLength: 4 })
  .map((keys) => `$.${keys.join('.')}`);
const otherPath = fc.constantFrom('$', '$.a[0]', "$['a']", '$..a', '$.a.*', '$.0', '$.a.b[0].c', '$.a[?(@.b)]', '$.a-b', '$.');
const leaf = fc.oneof(fc.string({ maxLength: 3 }), fc.integer(), fc.boolean(), fc.constantFrom(null, 0, '', Number.NaN, false, undefined));
const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, leaf, tie('array'), tie('object'), tie('inherited')),
  array: fc.array(tie('value'), { maxLength: 3 }),
  object: fc.dictionary(fc.constantFrom('a', 'b', 'kind', 'node', 'type', 'length', 'waitS', '_x1'), tie('value'), { maxKeys: 4 }),
  // Keys a path may name that the object only inherits (the library follows own keys only).
  inherited: tie('object').map((own) => Object.assign(Object.create({ a: 'inherited', length: 9 }), own)),
}));

describe('directJsonPath: aws-local-stepfunctions reads of the bundled interpreter', () => {
  it("answers as jsonpath-plus's JSONPath({ path, json, wrap: false }) does, for any path and value", () => {
    fc.assert(
      fc.property(fc.oneof(simplePath, otherPath), value, (path, json) => agree({ path, json, wrap: false })),
      { numRuns: 3000 },
    );
  });

  it("answers every path of the definition as the library does, over the payloads a run's steps carry", () => {
    const definition = buildDefinition({
      advance: 'advance',
      repair: 'repair',
      continueRun: 'continue',
      interrupted: 'interrupted',
      runners: { shell: 'shell', transform: 'transform', llm: 'llm' },
    });
    const paths = new Set<string>();
    JSON.stringify(definition, (key, v: unknown) => {
      if (typeof v === 'string' && v.startsWith('$') && (key === 'Variable' || key.endsWith('Path') || key.endsWith('.$'))) paths.add(v);
      return v;
    });
    expect(paths.size).toBeGreaterThan(5);
    const payloads = [
      { kind: 'run', runId: 'r', owner: 'o', seq: 3, node: { id: 'n', type: 'transform', params: { input: 1 } }, waitS: 2 },
      { kind: 'run', runId: 'r', owner: 'o', seq: 3, node: { id: 'n', type: 'shell', params: {} }, waitUntil: '2026-11-26T00:00:00Z' },
      { kind: 'done', runId: 'r', owner: 'o' },
      { kind: 'batch', runId: 'r', owner: 'o', items: [{ seq: 1 }], width: 2 },
      { kind: 'run', node: null },
      'text',
      null,
    ];
    for (const path of paths)
      for (const json of payloads)
        agree(path.startsWith('$$') ? { path: path.slice(1), json: { Execution: { Id: 'x' } }, wrap: false } : { path, json, wrap: false });
  });

  it('hands the library every call it does not answer itself', () => {
    const calls: object[] = [];
    const spy = (options: never): unknown => {
      calls.push(options);
      return 'library';
    };
    expect(directJsonPath({ path: '$.a', json: { a: 1 }, wrap: true }, spy)).toBe('library');
    expect(directJsonPath({ path: '$.a', json: { a: 1 }, wrap: false, flatten: true }, spy)).toBe('library');
    expect(directJsonPath({ path: '$.a', wrap: false }, spy)).toBe('library');
    expect(directJsonPath({ path: '$..a', json: { a: 1 }, wrap: false }, spy)).toBe('library');
    expect(calls).toHaveLength(4);
    expect(directJsonPath({ path: '$.a.b', json: { a: { b: 2 } }, wrap: false }, spy)).toBe(2);
    expect(calls).toHaveLength(4);
  });

  it('is what the bundled interpreter reads through (dist/, built by npm run build)', () => {
    const bundles = ['dist/flowmend.cjs', 'dist/serve-worker.cjs'];
    if (!bundles.every((file) => existsSync(file))) return expect.fail('dist/ is missing: npm run build');
    for (const file of bundles) expect(readFileSync(file, 'latin1')).toMatch(/jp=options=>directJsonPath\(options,JSONPath\)/);
  });
});
