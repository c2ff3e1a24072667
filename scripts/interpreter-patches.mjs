// An esbuild plugin for the CLI's bundles: three patches of aws-local-stepfunctions's own code, each checked when the
// bundle is built (the build fails when the library no longer reads as they expect, as a new version would: look at
// this file again). Run from source (the tests in-process), the library runs as published.
//
// - Its paths. The library reads every path of the definition (each Choice rule of Route, a Task's paths) through
//   its own binding of jsonpath-plus's `JSONPath`, whose constructor throws each scalar result out to hand it back.
//   The binding it imports as `jp` is replaced by functions/hosts/local/jsonpath-direct.ts, which reads a simple
//   path itself and hands any other to the library.
// - Its event log. An execution queues each state's entry and exit (with the state's input and output) and signals
//   each through an EventTarget, whether or not anyone reads the log (`eventLogs`); the queue holds every payload
//   until the execution ends. An execution run with `eventLog: 'off'` (NO_EVENT_LOG in local-host.ts, which passes
//   it when no `observeExecution` reads the log) gets a logger whose `dispatch` does nothing; `close()` still ends
//   its log, empty, so a Map state that forwards its iterations' logs to the execution's ends as before.
// - Its copies of JSON. Each state's execution copies its input (`cloneJSON`), an object through Object.entries,
//   an array of pairs and Object.fromEntries: ~3 us of a serve step's payload here, against ~0.8 us for the copy
//   made key by key below (an own `__proto__` key, which JSON.parse makes and assignment would not, is defined as
//   Object.fromEntries defines it).
import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';

const BINDING = 'import { JSONPath as jp } from "jsonpath-plus";';
const EVENT_LOGGER = 'const eventLogger = new EventLogger();';
const CLONE_OBJECT = '  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, cloneJSON(v)]));';
const CLONE_BY_KEY = [
  '  const copy = {};',
  '  for (const key of Object.keys(value)) {',
  '    const item = cloneJSON(value[key]);',
  '    if (key === "__proto__") Object.defineProperty(copy, key, { value: item, writable: true, enumerable: true, configurable: true });',
  '    else copy[key] = item;',
  '  }',
  '  return copy;',
].join('\n');
/** The run option that turns an execution's event log off (what NO_EVENT_LOG in local-host.ts holds). */
export const EVENT_LOG_OFF = { eventLog: 'off' };

const count = (source, text) => source.split(text).length - 1;

/** The library's bundle source with the patches, or the reason it cannot take them. */
export const patchInterpreterSource = (source, { root }) => {
  const calls = source.match(/\bjp\(/g)?.length ?? 0;
  if (count(source, BINDING) !== 1 || calls !== 2) return { error: `not the JSONPath binding scripts/interpreter-patches.mjs replaces (${calls} calls of jp)` };
  if (count(source, EVENT_LOGGER) !== 1) return { error: 'not the one EventLogger of StateMachine.run that scripts/interpreter-patches.mjs replaces' };
  if (count(source, CLONE_OBJECT) !== 1) return { error: 'not the one object copy of cloneJSON that scripts/interpreter-patches.mjs replaces' };
  const direct = JSON.stringify(`${root}functions/hosts/local/jsonpath-direct.ts`);
  const binding = [
    'import { JSONPath as jpLibrary } from "jsonpath-plus";',
    `import { directJsonPath } from ${direct};`,
    'const jp = (options) => directJsonPath(options, jpLibrary);',
  ].join('\n');
  const logger = `const eventLogger = options?.eventLog === ${JSON.stringify(EVENT_LOG_OFF.eventLog)} ? Object.assign(new EventLogger(), { dispatch() {} }) : new EventLogger();`;
  return { contents: source.replace(BINDING, binding).replace(EVENT_LOGGER, logger).replace(CLONE_OBJECT, CLONE_BY_KEY) };
};

export const interpreterPatches = ({ root }) => ({
  name: 'interpreter-patches',
  setup(build) {
    build.onLoad({ filter: /aws-local-stepfunctions[\\/]build[\\/]main\.node\.esm\.js$/ }, (args) => {
      const patched = patchInterpreterSource(readFileSync(args.path, 'utf8'), { root });
      if ('error' in patched) return { errors: [{ text: `${args.path}: ${patched.error}` }] };
      return { contents: patched.contents, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
});
