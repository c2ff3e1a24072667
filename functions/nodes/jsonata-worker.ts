import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import type { JsonataAnswer, JsonataRequest } from './jsonata-eval.ts';

/**
 * JSONata evaluations in worker threads that a timeout ends (Worker.terminate): JSONata's own timeout
 * is checked between steps, so one backtracking regular expression ran 4-18 s past it, blocking the
 * host's event loop. Each worker evaluates one expression at a time; up to one per core (at most 4) run
 * at once, the others wait their turn, and idle workers stay warm (unref'd) for the next transform.
 * Where no worker file is shipped (a Lambda bundle), the caller evaluates in its own thread (`undefined`).
 */

/** Beside the CLI bundle (dist/), or the build's output seen from the sources (functions/nodes/). */
const CANDIDATES = ['./transform-worker.cjs', '../../dist/transform-worker.cjs'];
/** Past the expression's timeout, the worker gets this long to answer with JSONata's own D1012 before it is ended. */
const GRACE_MS = 100;
/** A transform that builds a huge value fails alone instead of taking the host's memory. */
const MAX_HEAP_MB = 512;
const MAX_WORKERS = Math.min(4, availableParallelism());

let workerFile: string | null | undefined;
const findWorkerFile = (): string | null => {
  if (workerFile === undefined) {
    const paths = CANDIDATES.map((candidate) => fileURLToPath(new URL(candidate, import.meta.url)));
    workerFile = paths.find((path) => existsSync(path)) ?? null;
  }
  return workerFile;
};

const idle: Worker[] = [];
const waiting: (() => void)[] = [];
let started = 0;
let nextId = 0;

/** A worker of the pool, once one is free (or can be started). */
const acquire = async (file: string): Promise<Worker> => {
  while (idle.length === 0 && started >= MAX_WORKERS) await new Promise<void>((resolve) => waiting.push(resolve));
  const worker = idle.pop();
  if (worker !== undefined) return worker;
  started += 1;
  // Loaded at the first worker, not with the runners: a resume that replays its transforms starts none (~3 ms of a CLI process here).
  const { Worker } = await import('node:worker_threads');
  return new Worker(file, { resourceLimits: { maxOldGenerationSizeMb: MAX_HEAP_MB } });
};

const release = (worker: Worker, reusable: boolean): void => {
  if (reusable) {
    worker.unref();
    idle.push(worker);
  } else {
    started -= 1;
    void worker.terminate();
  }
  waiting.shift()?.();
};

const evaluateOn = (worker: Worker, request: JsonataRequest): Promise<JsonataAnswer> => {
  worker.ref();
  nextId += 1;
  const id = nextId;
  return new Promise<JsonataAnswer>((resolve) => {
    const finish = (answer: JsonataAnswer, reusable: boolean): void => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      release(worker, reusable);
      resolve(answer);
    };
    const onMessage = (message: JsonataAnswer & { readonly id: number }): void => {
      if (message.id !== id) return;
      const { id: _id, ...answer } = message;
      finish(answer, true);
    };
    const onError = (error: Error & { code?: string }): void => {
      const memory = error.code === 'ERR_WORKER_OUT_OF_MEMORY';
      const message = memory ? `the evaluation ran out of memory (a transform may use ${MAX_HEAP_MB} MB)` : error.message;
      finish({ ok: false, failure: { code: memory ? 'D1013' : 'D1014', message } }, false);
    };
    const onExit = (): void => finish({ ok: false, failure: { code: 'D1014', message: 'the evaluation thread stopped' } }, false);
    const timer = setTimeout(() => {
      const message = `Expression evaluation timeout: stopped after timeout_s (${request.timeoutMs / 1000} s)`;
      finish({ ok: false, failure: { code: 'D1012', message } }, false);
    }, request.timeoutMs + GRACE_MS);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage({ id, ...request });
  });
};

/** Evaluates in a worker; `undefined` when this host ships no worker file. */
export const evaluateInWorker = (request: JsonataRequest): Promise<JsonataAnswer> | undefined => {
  const file = findWorkerFile();
  if (file === null) return undefined;
  return acquire(file).then((worker) => evaluateOn(worker, request));
};
