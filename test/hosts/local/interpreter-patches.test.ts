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

// The CLI's bundles run aws-local-stepfunctions with two patches (scripts/interpreter-patches.mjs). The paths'
// patch is held to the library by jsonpath-direct.test.ts; here, the event log's: the real library, bundled with
// the build's plugins, runs a machine with a Task, a Choice and a Map with and without NO_EVENT_LOG.

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

describe("the bundled interpreter's event log", () => {
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
  });
});
