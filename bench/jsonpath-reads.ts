// The local host's JSONPath reads (issue 30): CPU per step of a chain of no-op transform nodes through the
// local host on SQLite, with jsonpath-plus's own `evaluate` and with the simple-path reader
// (functions/hosts/local/jsonpath-simple-paths.ts), alternated round by round in one process; the reads a
// step makes, by path; what one read costs each way; the Route Choice's rule order (a transform step's rule
// is the 10th of 11 types): CPU per step with the definition as built and with transform's rule moved first
// of the node types, alternated; and what aws-local-stepfunctions's per-state cloneJSON (its code, copied
// here: the library does not export it) costs on the state input a step carries.
// BENCH_ROUNDS (5), BENCH_NODES (1000). Prints figures and the machine; no assertions.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { JSONPath } from 'jsonpath-plus';
import { SqliteRunStore } from '../functions/adapters/sqlite-run-store.ts';
import { type AslDefinition, buildDefinition, STATE, type WorkflowInput, WorkflowSchema } from '../functions/core/index.ts';
import { libraryEvaluate } from '../functions/hosts/local/jsonpath-simple-paths.ts';
import { LocalHost } from '../functions/hosts/local/local-host.ts';
import { localRunners } from '../functions/hosts/local/local-runners.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const NODES = Number(process.env.BENCH_NODES ?? 1000);

const chain = (nodes: number): WorkflowInput => ({
  nodes: Array.from({ length: nodes }, (_, i) => ({
    id: `n${i}`,
    type: 'transform',
    params: { expression: '$', input: i === 0 ? 0 : `\${n${i - 1}.result}` },
  })),
  edges: Array.from({ length: nodes - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});
/** A pair in one order on even rounds and the other on odd ones: in a fixed order the second of a pair measured 0.1-0.15 ms a step cheaper, more than the differences sought. */
const inTurn = <T>(round: number, pair: readonly [T, T]): readonly T[] => (round % 2 === 0 ? pair : [pair[1], pair[0]]);
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

const prototype = JSONPath.prototype as unknown as { evaluate: (...args: unknown[]) => unknown };
const cloneJSON = (value: unknown): unknown => {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(cloneJSON);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cloneJSON(v)]));
};

/** The definition the local host builds, with Route's `transform` rule moved to just after the two wait rules (the same semantics: the type rules exclude each other). */
const transformFirst = (): AslDefinition => {
  const lambda = (name: string) => `arn:aws:lambda:us-east-1:000000000000:function:flowmend-${name}`;
  const definition = buildDefinition({
    advance: lambda('advance'),
    repair: lambda('repair'),
    continueRun: 'arn:aws:states:::states:startExecution',
    interrupted: lambda('mark-interrupted'),
    runners: Object.fromEntries(localRunners.map((r) => [r.type, lambda(`run-${r.type}`)])),
  });
  const route = definition.States[STATE.route] as { Choices: { Next: string }[] };
  const at = route.Choices.findIndex((rule) => rule.Next === 'RunTransform');
  const [rule] = route.Choices.splice(at, 1);
  route.Choices.splice(2, 0, rule as { Next: string });
  return definition;
};

const stateDir = mkdtempSync(join(tmpdir(), 'flowmend-bench-jsonpath-'));
try {
  console.log(`machine: ${cpus()[0]?.model ?? 'unknown'} x${cpus().length}, node ${process.version}, load average ${loadavg()[0]?.toFixed(1)} when started`);
  const store = SqliteRunStore.open(join(stateDir, 'runs'));
  const host = new LocalHost({ store });
  const patched = prototype.evaluate;
  const library = libraryEvaluate();
  if (patched === library) throw new Error('the simple-path reader did not apply');
  const run = async (nodes: number, on = host) => {
    const report = await on.start({ workflow: WorkflowSchema.parse(chain(nodes)), workflowName: 'bench', params: {}, repairEnabled: false, maxRepairs: 0 });
    if (!report.success) throw new Error(`run failed: ${JSON.stringify(report.errors)}`);
  };
  await run(100);
  prototype.evaluate = library;
  await run(100);
  prototype.evaluate = patched;

  // The reads of one run, by path, and a state input as Route sees it (the object its `$.kind` is read from).
  const reads = new Map<string, number>();
  let routeInput: unknown;
  prototype.evaluate = function (this: unknown, ...args: unknown[]) {
    const { path, json } = args[0] as { path: string; json: unknown };
    reads.set(path, (reads.get(path) ?? 0) + 1);
    if (path === '$.kind' && (json as { kind?: unknown })?.kind === 'run') routeInput = json;
    return patched.apply(this, args);
  };
  await run(200);
  prototype.evaluate = patched;
  const total = [...reads.values()].reduce((a, b) => a + b, 0);
  const byPath = [...reads].sort((a, b) => b[1] - a[1]).map(([path, n]) => `${path} ${(n / 200).toFixed(2)}`);
  console.log(`JSONPath reads per step: ${(total / 200).toFixed(2)} (${byPath.join(', ')})`);

  // One read as aws-local-stepfunctions makes it, each way, on that input.
  const perRead = (evaluate: typeof patched, path: string): number => {
    prototype.evaluate = evaluate;
    const n = 100_000;
    const t = performance.now();
    for (let i = 0; i < n; i += 1) JSONPath({ path, json: routeInput as object, wrap: false });
    prototype.evaluate = patched;
    return ((performance.now() - t) / n) * 1000;
  };
  for (const path of ['$.kind', '$.node.type', '$.waitS']) {
    const each = [0, 1, 2].map(() => [perRead(library, path), perRead(patched, path)]);
    console.log(
      `one read of ${path}: ${median(each.map((e) => e[0] as number)).toFixed(2)} µs with jsonpath-plus's evaluate, ${median(each.map((e) => e[1] as number)).toFixed(2)} µs with the simple-path reader`,
    );
  }
  const clones = 20_000;
  const tc = performance.now();
  for (let i = 0; i < clones; i += 1) cloneJSON(routeInput);
  console.log(
    `cloneJSON of that state input (${JSON.stringify(routeInput).length} bytes of JSON): ${(((performance.now() - tc) / clones) * 1000).toFixed(2)} µs`,
  );

  // CPU per step, alternating.
  const cpu: Record<'library' | 'patched', number[]> = { library: [], patched: [] };
  const wall: Record<'library' | 'patched', number[]> = { library: [], patched: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [label, evaluate] of inTurn(round, [
      ['library', library],
      ['patched', patched],
    ] as const)) {
      prototype.evaluate = evaluate;
      const c = process.cpuUsage();
      const t = performance.now();
      await run(NODES);
      wall[label].push((performance.now() - t) / NODES);
      const used = process.cpuUsage(c);
      cpu[label].push((used.user + used.system) / 1000 / NODES);
    }
  }
  prototype.evaluate = patched;

  const reordered = new LocalHost({ store, definition: transformFirst() });
  await run(100, reordered);
  const byOrder: Record<'built' | 'transformFirst', number[]> = { built: [], transformFirst: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [label, on] of inTurn(round, [
      ['built', host],
      ['transformFirst', reordered],
    ] as const)) {
      const c = process.cpuUsage();
      await run(NODES, on);
      const used = process.cpuUsage(c);
      byOrder[label].push((used.user + used.system) / 1000 / NODES);
    }
  }
  const line = (label: 'library' | 'patched') => `${median(cpu[label]).toFixed(3)} ms CPU/step (wall ${median(wall[label]).toFixed(3)})`;
  console.log(
    `${NODES}-node chain on SQLite, median of ${ROUNDS} alternating: jsonpath-plus's evaluate ${line('library')}, simple-path reader ${line('patched')}; ` +
      `CPU saved ${(median(cpu.library) - median(cpu.patched)).toFixed(3)} ms/step`,
  );
  console.log(
    `Route's order, median of ${ROUNDS} alternating (simple-path reader): as built ${median(byOrder.built).toFixed(3)} ms CPU/step,` +
      ` transform's rule first ${median(byOrder.transformFirst).toFixed(3)} (18 fewer reads a step)`,
  );
  store.close();
  console.log(`load average when done: ${loadavg()[0]?.toFixed(1)}`);
} finally {
  rmSync(stateDir, { recursive: true, force: true });
}
