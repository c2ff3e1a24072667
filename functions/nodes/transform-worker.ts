import { parentPort } from 'node:worker_threads';
import jsonata from 'jsonata';
import { evaluateJsonata, type JsonataRequest } from './jsonata-eval.ts';

/**
 * The transform node's worker thread (bundled by scripts/build.mjs into dist/transform-worker.cjs): it
 * evaluates one expression at a time, so that a timeout can end it (Worker.terminate) even inside one
 * regular expression that backtracks for minutes, and the host's event loop (`serve`) never waits on it.
 */
parentPort?.on('message', async (request: JsonataRequest & { readonly id: number }) => {
  parentPort?.postMessage({ id: request.id, ...(await evaluateJsonata(jsonata, request)) });
});
