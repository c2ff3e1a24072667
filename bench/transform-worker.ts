// What running a transform in a worker thread costs (functions/nodes/jsonata-worker.ts), against
// evaluating it in the caller's thread: the first transform of a process (the worker starts and loads
// JSONata), then warm ones alternated A/B, on a small input and a 1 MB one (as text, parsed in the
// worker, and as objects, copied to it). Then the CPU of the process (every thread) per transform of a
// bounded expression (jsonata-inline.ts), as the runner now evaluates it (evaluateIfBounded) against the
// worker it used before: batches of 200 sequential evaluations, alternated, CPU from process.cpuUsage.
// Run after `node scripts/build.mjs` (the worker file is dist/transform-worker.cjs).
// Prints figures and the machine; no assertions.
import { cpus, loadavg } from 'node:os';
import jsonata from 'jsonata';
import { evaluateIfBounded, evaluateJsonata, type JsonataRequest } from '../functions/nodes/jsonata-eval.ts';
import { evaluateInWorker } from '../functions/nodes/jsonata-worker.ts';

const inWorker = (request: JsonataRequest) => {
  const answer = evaluateInWorker(request);
  if (answer === undefined) throw new Error('no worker file: run node scripts/build.mjs first');
  return answer;
};
const here = (request: JsonataRequest) => evaluateJsonata(jsonata, request);

const small: JsonataRequest = { expression: 'items[price > 10].name', input: { items: [{ name: 'a', price: 20 }] }, bindings: {}, timeoutMs: 30_000 };
const big: JsonataRequest = {
  ...small,
  expression: '$count(items)',
  input: { items: Array.from({ length: 10_000 }, (_, i) => ({ name: `item-${i}`, price: i, tags: ['x', 'y'] })) },
};

const t0 = performance.now();
await inWorker(small);
console.log(`first transform in a worker (start + JSONata load): ${(performance.now() - t0).toFixed(1)} ms`);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const bigText: JsonataRequest = { ...big, input: JSON.stringify(big.input) };
const cases = [
  ['small input', small, 400],
  ['1 MB input as JSON text (a shell stdout)', bigText, 40],
  ['1 MB input as objects', big, 40],
] as const;
for (const [name, request, rounds] of cases) {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    for (const [list, evaluate] of i % 2 === 0
      ? ([
          [a, here],
          [b, inWorker],
        ] as const)
      : ([
          [b, inWorker],
          [a, here],
        ] as const)) {
      const t = performance.now();
      await evaluate(request);
      list.push(performance.now() - t);
    }
  }
  console.log(`${name}: in the caller's thread ${median(a).toFixed(3)} ms, in the warm worker ${median(b).toFixed(3)} ms (medians of ${rounds})`);
}
const bounded = async (request: JsonataRequest) => {
  const answer = await evaluateIfBounded(jsonata, request);
  if (answer === undefined) throw new Error(`not bounded: ${request.expression}`);
  return answer;
};
const BATCH = 200;
const cpuPerEvaluation = async (evaluate: (request: JsonataRequest) => Promise<unknown>, request: JsonataRequest): Promise<number> => {
  const before = process.cpuUsage();
  for (let i = 0; i < BATCH; i += 1) await evaluate(request);
  const { user, system } = process.cpuUsage(before);
  return (user + system) / 1000 / BATCH;
};
const noOp: JsonataRequest = { expression: '$', input: 3, bindings: {}, timeoutMs: 30_000 };
for (const [name, request] of [
  ["a no-op step ('$', as bench/serve-throughput.ts runs)", noOp],
  ['a filter on a small input', small],
] as const) {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < 15; i += 1) {
    if (i % 2 === 0) {
      a.push(await cpuPerEvaluation(bounded, request));
      b.push(await cpuPerEvaluation(inWorker, request));
    } else {
      b.push(await cpuPerEvaluation(inWorker, request));
      a.push(await cpuPerEvaluation(bounded, request));
    }
  }
  console.log(
    `CPU per transform, ${name}: in the caller's thread ${median(a).toFixed(3)} ms, through the worker ${median(b).toFixed(3)} ms (medians of 15 batches of ${BATCH})`,
  );
}
console.log(
  `machine: ${cpus().length} x ${cpus()[0]?.model}, load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}, Node ${process.version}`,
);
process.exit(0);
