import { StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { JSONPath } from 'jsonpath-plus';
import { describe, expect, it } from 'vitest';
import { buildDefinition } from '../../../functions/core/definition.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { libraryEvaluate, makeSimplePathsCheap } from '../../../functions/hosts/local/jsonpath-simple-paths.ts';
import { LocalHost } from '../../../functions/hosts/local/local-host.ts';
import { localRunners } from '../../../functions/hosts/local/local-runners.ts';

type Prototype = { evaluate: unknown; _trace: (...args: unknown[]) => unknown };
const prototype = JSONPath.prototype as unknown as Prototype;

/** Counts calls of the library's general evaluator (`_trace`) until `stop` is called, which returns the count. */
const countTraces = (): { stop: () => number } => {
  const trace = prototype._trace;
  let traces = 0;
  prototype._trace = function (this: unknown, ...args: unknown[]) {
    traces += 1;
    return trace.apply(this, args);
  };
  return {
    stop: () => {
      prototype._trace = trace;
      return traces;
    },
  };
};

/** What `work` returned or threw, and how many times it used the library's general evaluator. */
const traced = (work: () => unknown): { traces: number; outcome: unknown } => {
  const counter = countTraces();
  let outcome: unknown;
  try {
    outcome = work();
  } catch (error) {
    outcome = { threw: (error as Error).constructor.name, message: (error as Error).message };
  }
  return { traces: counter.stop(), outcome };
};

/** `work` with jsonpath-plus as published (the patch, if applied, set aside and put back). */
const unpatched = <T>(work: () => T): T => {
  const patched = prototype.evaluate;
  prototype.evaluate = libraryEvaluate();
  try {
    return work();
  } finally {
    prototype.evaluate = patched;
  }
};

/** Every path the definition has aws-local-stepfunctions read through JSONPath (`$$.x` is read as `$.x` of the context). */
const definitionPaths = (): string[] => {
  const definition = buildDefinition({
    advance: 'advance',
    repair: 'repair',
    continueRun: 'continue',
    interrupted: 'interrupted',
    runners: Object.fromEntries(localRunners.map((r) => [r.type, r.type])),
  });
  const paths = new Set<string>(['$.rev']); // an argument of CONTINUED_EXECUTION_NAME's States.Format
  const visit = (value: unknown, key: string): void => {
    if (typeof value === 'string' && value.startsWith('$') && key !== 'ResultPath' && (key === 'Variable' || key.endsWith('Path') || key.endsWith('.$'))) {
      paths.add(value.startsWith('$$') ? value.slice(1) : value);
    } else if (value && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) visit(v, k);
    }
  };
  visit(definition, '');
  return [...paths];
};

/** Paths the fast path leaves to the library, and keys that are traps for a hand-written reader. */
const OTHER_PATHS = [
  '$',
  '$.kind.length',
  '$.items.length',
  '$.items.0',
  '$.items[0]',
  "$['kind']",
  "$.check['kind']",
  '$..type',
  '$.*',
  '$.node.*',
  '$.items[*]',
  '$.items[0:1]',
  '$.node^',
  '$.constructor',
  '$.__proto__',
  '$.toString',
  '$.hasOwnProperty',
  '$.node.type.',
  '$.',
];

const step = { kind: 'run', runId: 'r-1', owner: 'o-1', seq: 3, rev: 'a1', node: { id: 'n1', type: 'transform', params: { expression: '$' } } };
const INPUTS: readonly unknown[] = [
  step,
  { ...step, waitS: 0 },
  { ...step, waitS: 2.5 },
  { ...step, waitUntil: '2026-11-26T09:00:00.000Z' },
  { ...step, node: { ...step.node, type: 'shell' } },
  { kind: 'batch', runId: 'r-1', nodeType: 'http', items: [{ a: 1 }, [2, 3], null], width: 2 },
  { kind: 'batch', nodeType: '', items: [], width: 0 },
  { kind: 'done', runId: 'r-1' },
  { kind: 'failed', error: { code: 'NodeFailed', message: 'it broke' } },
  { kind: 'failed', error: { code: '', message: null } },
  { kind: 'failed', error: null },
  { kind: 'failed', error: 'plain text' },
  { check: { kind: 'go' }, node: { type: 'llm' }, runId: 'r', owner: 'o', seq: 0 },
  { check: { kind: 'refused', error: { code: 'Cancelled' } }, node: { type: 'llm' } },
  { check: null },
  { check: 'go' },
  { kind: 0 },
  { kind: false },
  { kind: true },
  { kind: null },
  { kind: '' },
  { kind: ['run'] },
  { kind: { run: true } },
  { kind: undefined },
  { node: 'transform' },
  { node: ['transform'] },
  { node: [{ type: 'transform' }] },
  { node: null },
  { node: { type: undefined } },
  { node: { type: 0 } },
  { node: { type: ['a', 'b'] } },
  { items: [[1], [2]], width: [1] },
  { StateMachine: { Id: 'arn:aws:states:us-east-1:000000000000:stateMachine:m' }, Execution: { Id: 'x' } },
  Object.create({ kind: 'inherited', node: { type: 'transform' } }),
  Object.assign(Object.create(null), { kind: 'run', node: Object.assign(Object.create(null), { type: 'shell' }) }),
  JSON.parse('{"__proto__": {"kind": "x"}, "constructor": 1, "toString": "s"}'),
  {},
  [],
  [step],
  null,
  undefined,
  0,
  1,
  '',
  'text',
  true,
  false,
];

const noop = (): void => undefined;
/** The options aws-local-stepfunctions passes (`wrap: false`), the library's defaults, and the ones left to the library. */
const OPTIONS: readonly Record<string, unknown>[] = [
  { wrap: false },
  {},
  { wrap: true },
  { flatten: true },
  { wrap: false, flatten: true },
  { resultType: 'path' },
  { resultType: 'pointer', wrap: false },
  { resultType: 'parent' },
  { resultType: 'parentProperty', wrap: false },
  { resultType: 'all' },
  { callback: noop },
  { eval: false, wrap: false },
  { parent: { up: 1 }, parentProperty: 'p' },
];

/** One JSONPath call as aws-local-stepfunctions makes it, recorded with what it returned and the callbacks it made. */
const query = (options: Record<string, unknown>, path: string, json: unknown) => {
  const calls: unknown[] = [];
  const callback = options.callback ? (...args: unknown[]) => calls.push(args) : undefined;
  const run = traced(() => JSONPath({ ...options, ...(callback ? { callback } : {}), path, json: json as object }));
  return { ...run, calls };
};

describe('makeSimplePathsCheap', () => {
  it('applies to the pinned jsonpath-plus, and is idempotent', () => {
    expect(makeSimplePathsCheap()).toBe(true);
    expect(makeSimplePathsCheap()).toBe(true);
    expect(prototype.evaluate).not.toBe(libraryEvaluate());
  });

  it('answers as jsonpath-plus does for every path of the definition and others, over a corpus of inputs and options', () => {
    makeSimplePathsCheap();
    const paths = definitionPaths();
    expect(paths).toEqual(expect.arrayContaining(['$.kind', '$.node.type', '$.nodeType', '$.waitS', '$.check.kind', '$.error.code', '$.StateMachine.Id']));
    let compared = 0;
    let fast = 0;
    for (const path of [...paths, ...OTHER_PATHS]) {
      for (const options of OPTIONS) {
        for (const json of INPUTS) {
          const patched = query(options, path, json);
          const library = unpatched(() => query(options, path, json));
          const where = `${path} ${JSON.stringify(options)} ${JSON.stringify(json)}`;
          compared += 1;
          if (patched.traces === 0) fast += 1;
          expect(library.traces > 0 || !json, where).toBe(true);
          expect(patched.outcome, where).toStrictEqual(library.outcome);
          expect(patched.calls, where).toStrictEqual(library.calls);
          // Values are the input's own, not copies (Choice rules and Parameters get them); other result types are made anew.
          if (options.resultType !== undefined) continue;
          const values = Array.isArray(library.outcome) ? library.outcome : [library.outcome];
          const patchedValues = Array.isArray(patched.outcome) ? patched.outcome : [patched.outcome];
          for (const [i, value] of values.entries()) expect(patchedValues[i], where).toBe(value);
        }
      }
    }
    // The definition's paths, read as aws-local-stepfunctions reads them, all took the fast path.
    for (const path of paths) for (const json of INPUTS) expect(query({ wrap: false }, path, json).traces, path).toBe(0);
    expect(compared).toBeGreaterThan(10_000);
    expect(fast).toBeGreaterThan(compared / 4);
  });

  it('answers as jsonpath-plus does when evaluate is called by hand, with options of its own', () => {
    makeSimplePathsCheap();
    const make = () => new (JSONPath as unknown as new (o: object) => { evaluate: (...args: unknown[]) => unknown })({ autostart: false, wrap: false });
    const forms: ((path: string, json: unknown) => unknown[])[] = [
      (path, json) => [{ path, json }],
      (path, json) => [{ path, json, wrap: true }],
      (path, json) => [{ path, json, wrap: true, flatten: true }],
      (path, json) => [{ path, json, resultType: 'pointer' }],
      (path, json) => [{ path, json, callback: noop }],
      (path, json) => [{ path, json }, { other: 'json' }, noop],
      (path, json) => [{ path, json }, undefined, undefined, noop],
      (path, json) => [path, json],
      (path) => [{ path }],
      (_path, json) => [{ json }],
    ];
    for (const path of ['$.kind', '$.node.type', '$.items', '$.kind.length', '$.items[0]']) {
      for (const form of forms) {
        for (const json of INPUTS) {
          const args = form(path, json);
          const patched = traced(() => make().evaluate(...args));
          const library = unpatched(() => traced(() => make().evaluate(...args)));
          expect(patched.outcome, `${path} ${JSON.stringify(args)}`).toStrictEqual(library.outcome);
        }
      }
    }
  });

  it('is what aws-local-stepfunctions reads a Choice and Parameters through', async () => {
    makeSimplePathsCheap();
    const definition = {
      StartAt: 'Route',
      States: {
        Route: {
          Type: 'Choice',
          Choices: [
            {
              And: [
                { Variable: '$.kind', StringEquals: 'run' },
                { Variable: '$.node.type', StringEquals: 'shell' },
              ],
              Next: 'Shell',
            },
            {
              And: [
                { Variable: '$.kind', StringEquals: 'run' },
                { Variable: '$.node.type', StringEquals: 'transform' },
              ],
              Next: 'Transform',
            },
          ],
          Default: 'Other',
        },
        Shell: { Type: 'Pass', Result: 'shell', End: true },
        Transform: { Type: 'Pass', Parameters: { 'id.$': '$.node.id', 'seq.$': '$.seq' }, End: true },
        Other: { Type: 'Pass', Result: 'other', End: true },
      },
    } as unknown as StateMachineDefinition;
    const machine = new StateMachine(definition);
    const counter = countTraces();
    const result = await machine.run(step).result.finally(counter.stop);
    expect(result).toEqual({ id: 'n1', seq: 3 });
    expect(counter.stop()).toBe(0);
  });

  it('is applied by the local host', () => {
    const patched = prototype.evaluate;
    prototype.evaluate = libraryEvaluate();
    try {
      new LocalHost({ store: new MemoryRunStore() });
      expect(prototype.evaluate).not.toBe(libraryEvaluate());
    } finally {
      prototype.evaluate = patched;
    }
  });
});
