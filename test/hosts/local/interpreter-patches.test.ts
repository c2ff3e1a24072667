import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { StateMachine as PublishedStateMachine } from 'aws-local-stepfunctions';
import * as esbuild from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { MemoryRunStore, parseWorkflow } from '../../../functions/core/index.ts';
import { LocalHost, NO_EVENT_LOG } from '../../../functions/hosts/local/local-host.ts';

// The CLI's bundles run aws-local-stepfunctions with three patches (scripts/interpreter-patches.mjs). The paths'
// patch is held to the library by jsonpath-direct.test.ts; here, the event log's and the JSON copy's: the real
// library, bundled with the build's plugins, runs a machine with a Task, a Choice and a Map with and without
// NO_EVENT_LOG, and one whose Task puts its result beside its input (the input's copy).

const ROOT = `${join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')}/`;
const LIBRARY = join(ROOT, 'node_modules', 'aws-local-stepfunctions', 'build', 'main.node.esm.js');

type Execution = { eventLogs: AsyncIterable<{ type: string }>; result: Promise<unknown> };
type Machine = { run(input: unknown, options?: object): Execution };
type MachineClass = new (definition: object, options?: object) => Machine;

const definition = {
  StartAt: 'Double',
  States: {
    Double: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:000000000000:function:double', Next: 'Big' },
    Big: { Type: 'Choice', Choices: [{ Variable: '$.n', NumericGreaterThan: 5, Next: 'Each' }], Default: 'Small' },
    Each: {
      Type: 'Map',
      ItemsPath: '$.items',
      Iterator: { StartAt: 'Item', States: { Item: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:000000000000:function:double', End: true } } },
      End: true,
    },
    Small: { Type: 'Succeed' },
  },
};
const handlers = {
  Double: async (input: { n: number; items: unknown[] }) => ({ n: input.n * 2, items: [{ n: 1 }, { n: 2 }, { n: 3 }] }),
  Item: async (input: { n: number }) => ({ n: input.n * 2 }),
};

/** The execution's result and every event of its log, read to its end. */
const runAndRead = async (StateMachine: MachineClass, options: object = {}): Promise<{ result: unknown; events: string[] }> => {
  const machine = new StateMachine(definition, { validationOptions: { noValidate: true } });
  const execution = machine.run({ n: 3 }, { overrides: { taskResourceLocalHandlers: handlers }, ...options });
  const events: string[] = [];
  const read = (async () => {
    for await (const event of execution.eventLogs) events.push(event.type);
  })();
  const result = await execution.result;
  await read;
  return { result, events };
};

/** The build's own plugins (scripts/, plain JavaScript without declarations). */
type Patches = {
  EVENT_LOG_OFF: object;
  interpreterPatches: (options: { root: string }) => esbuild.Plugin;
  patchInterpreterSource: (source: string, options: { root: string }) => { contents: string } | { error: string };
};
const script = async <T>(name: string): Promise<T> => (await import(pathToFileURL(join(ROOT, 'scripts', name)).href)) as T;

let dir: string;
let Bundled: MachineClass;
let patches: Patches;

beforeAll(async () => {
  // The bundle requires nothing outside itself: the build's stub replaces the Lambda client, and the lazy
  // asl-validator is never loaded (the machine does not validate).
  patches = await script<Patches>('interpreter-patches.mjs');
  const { lazyAslValidator } = await script<{ lazyAslValidator: esbuild.Plugin }>('lazy-asl-validator.mjs');
  const { noAwsLambdaInInterpreter } = await script<{ noAwsLambdaInInterpreter: esbuild.Plugin }>('no-aws-lambda-in-interpreter.mjs');
  dir = mkdtempSync(join(tmpdir(), 'interpreter-patches-'));
  const built = await esbuild.build({
    stdin: { contents: "export { StateMachine } from 'aws-local-stepfunctions';", resolveDir: ROOT, loader: 'js' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    write: false,
    plugins: [noAwsLambdaInInterpreter, patches.interpreterPatches({ root: ROOT }), lazyAslValidator],
    logLevel: 'silent',
  });
  const file = join(dir, 'interpreter.cjs');
  writeFileSync(file, built.outputFiles[0]?.text ?? '');
  Bundled = (createRequire(file)(file) as { StateMachine: MachineClass }).StateMachine;
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the bundled interpreter's event log and JSON copies", () => {
  it('is what the host passes: NO_EVENT_LOG is the option the patch reads', () => {
    expect(NO_EVENT_LOG).toEqual(patches.EVENT_LOG_OFF);
  });

  it('is turned off by the local host unless something observes it', async () => {
    const parsed = parseWorkflow({ nodes: [{ id: 'one', type: 'transform', params: { expression: '1' } }], edges: [] });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const spec = { workflow: parsed.workflow, workflowName: 'one', params: {}, repairEnabled: false, maxRepairs: 0 };
    const run = vi.spyOn(PublishedStateMachine.prototype, 'run');
    try {
      expect((await new LocalHost({ store: new MemoryRunStore() }).start(spec)).status).toBe('succeeded');
      expect(run.mock.calls.at(-1)?.[1]).toMatchObject(NO_EVENT_LOG);
      const observed: unknown[] = [];
      const observeExecution = (events: AsyncIterable<unknown>) =>
        void (async () => {
          for await (const event of events) observed.push(event);
        })();
      expect((await new LocalHost({ store: new MemoryRunStore(), observeExecution }).start(spec)).status).toBe('succeeded');
      expect(run.mock.calls.at(-1)?.[1]).not.toHaveProperty('eventLog');
    } finally {
      run.mockRestore();
    }
  });

  it('is kept by default, as the published library keeps it', async () => {
    const bundled = await runAndRead(Bundled);
    const published = await runAndRead(PublishedStateMachine as unknown as MachineClass);
    expect(bundled).toEqual(published);
    expect(bundled.events).toEqual(expect.arrayContaining(['ExecutionStarted', 'StateEntered', 'MapIterationStarted', 'ExecutionSucceeded']));
  });

  it('is empty with NO_EVENT_LOG, and ends with the execution, whose result is the same', async () => {
    const kept = await runAndRead(Bundled);
    const off = await runAndRead(Bundled, NO_EVENT_LOG);
    expect(off.events).toEqual([]);
    expect(off.result).toEqual(kept.result);
    expect(off.result).toEqual([{ n: 2 }, { n: 4 }, { n: 6 }]);
  });

  it('is kept with NO_EVENT_LOG by the published library (run from source, the option is ignored)', async () => {
    const published = await runAndRead(PublishedStateMachine as unknown as MachineClass, NO_EVENT_LOG);
    expect(published.events.length).toBeGreaterThan(10);
  });

  it('copies a state input as the published library does, an own __proto__ key and nested arrays included', async () => {
    const beside = {
      StartAt: 'Keep',
      States: { Keep: { Type: 'Task', Resource: 'arn:aws:lambda:us-east-1:000000000000:function:keep', ResultPath: '$.r', End: true } },
    };
    const input = JSON.parse('{"__proto__": {"x": 1}, "a": [1, {"b": null}, [true, "s"]], "o": {"__proto__": 2}}') as object;
    const outputs = await Promise.all(
      [Bundled, PublishedStateMachine as unknown as MachineClass].map(async (StateMachine) => {
        const machine = new StateMachine(beside, { validationOptions: { noValidate: true } });
        return machine.run(input, { overrides: { taskResourceLocalHandlers: { Keep: async () => 7 } }, ...NO_EVENT_LOG }).result;
      }),
    );
    const [bundled, published] = outputs as [Record<string, unknown>, Record<string, unknown>];
    expect(JSON.stringify(bundled)).toBe('{"__proto__":{"x":1},"a":[1,{"b":null},[true,"s"]],"o":{"__proto__":2},"r":7}');
    expect(JSON.stringify(bundled)).toBe(JSON.stringify(published));
    expect(Object.hasOwn(bundled, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(bundled)).toBe(Object.prototype);
  });

  it('fails the build when the library no longer reads as the patches expect', () => {
    const source = readFileSync(LIBRARY, 'utf8');
    expect(patches.patchInterpreterSource(source, { root: ROOT })).toHaveProperty('contents');
    expect(
      patches.patchInterpreterSource(source.replace('const eventLogger = new EventLogger();', 'const eventLogger = new Logger();'), { root: ROOT }),
    ).toEqual({
      error: expect.stringContaining('EventLogger'),
    });
    expect(patches.patchInterpreterSource(source.replace('import { JSONPath as jp } from "jsonpath-plus";', ''), { root: ROOT })).toEqual({
      error: expect.stringContaining('JSONPath'),
    });
    expect(
      patches.patchInterpreterSource(source.replace('Object.fromEntries(Object.entries(value)', 'Object.fromEntries(entries(value)'), { root: ROOT }),
    ).toEqual({
      error: expect.stringContaining('cloneJSON'),
    });
  });
});
