// One warm Lambda sandbox for the moto emulator (scripts/emulator/moto_server.py starts it): loads a
// function's handler once, as Lambda's Node runtime does, then answers invocations one at a time.
// Requests arrive on stdin, one JSON line each: {event, context}. Each answer goes to the file descriptor named by the last argument, one JSON line:
// {result} or {error: {errorType, errorMessage, trace}}, with `logs`, what the handler wrote to
// stdout/stderr during that invocation (moto files them in the function's log group).
import { writeSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

const [codeDir, handlerSpec, answerFd] = process.argv.slice(2);
const ANSWER_FD = Number(answerFd);
const dot = handlerSpec.lastIndexOf('.');
const moduleName = handlerSpec.slice(0, dot);
const exportName = handlerSpec.slice(dot + 1);

let captured = '';
for (const stream of [process.stdout, process.stderr]) {
  stream.write = (chunk, encoding, callback) => {
    captured += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') done();
    return true;
  };
}

const answer = (message) => {
  const line = `${JSON.stringify({ ...message, logs: captured })}\n`;
  captured = '';
  const bytes = Buffer.from(line, 'utf8');
  let written = 0;
  while (written < bytes.length) written += writeSync(ANSWER_FD, bytes, written);
};

const errorPayload = (error) => ({
  errorType: error?.name ?? 'Error',
  errorMessage: error?.message ?? String(error),
  trace: typeof error?.stack === 'string' ? error.stack.split('\n') : [],
});

const load = async () => {
  for (const ext of ['.mjs', '.js', '.cjs']) {
    try {
      const mod = await import(pathToFileURL(join(codeDir, `${moduleName}${ext}`)).href);
      return mod[exportName] ?? mod.default?.[exportName];
    } catch (error) {
      if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(`${moduleName}${ext}`)) throw error;
    }
  }
  throw Object.assign(new Error(`Cannot find module '${moduleName}'`), { name: 'Runtime.ImportModuleError' });
};

let handler;
let initError;
try {
  handler = await load();
  if (typeof handler !== 'function') initError = Object.assign(new Error(`${handlerSpec} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
} catch (error) {
  initError = error;
}

const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
for await (const line of lines) {
  if (line.trim() === '') continue;
  const { event, context: base } = JSON.parse(line);
  if (initError !== undefined) {
    answer({ error: errorPayload(initError) });
    continue;
  }
  const deadline = Date.now() + base.timeoutMs;
  const context = {
    ...base,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  try {
    const result = await handler(event, context);
    answer({ result: result === undefined ? null : result });
  } catch (error) {
    answer({ error: errorPayload(error) });
  }
}
// The emulator closed our stdin (it stopped, or dropped this sandbox): nothing else will come.
process.exit(0);
