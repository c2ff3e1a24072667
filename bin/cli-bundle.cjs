// Loads the CLI bundle (dist/flowmend.cjs, one CommonJS file) with a V8 code cache, so that a command starts
// from compiled bytecode instead of parsing and compiling the bundle. Node 20 has no compile cache for ES
// modules (module.enableCompileCache is 22.1+), but vm.Script takes `cachedData` for a classic script.
//
// The build (scripts/code-cache.mjs) writes one cache per common command to dist/code-cache/ (see cacheDirFor),
// each made after running that command, so it holds the functions the command compiled lazily too (`validate`
// runs a bundle of its own: bundleNameFor). A cache from another V8 (another Node) is not looked for; one V8
// rejects anyway (other V8 flags, a damaged file) costs a normal compile: `cachedDataRejected` is only
// reported, never fatal.
'use strict';
const { readFileSync } = require('node:fs');
const { createRequire } = require('node:module');
const { dirname, join } = require('node:path');
const vm = require('node:vm');

/**
 * The bundle a command line runs, in dist/: `validate` has one of its own, built without the other commands
 * (a third of the size: less to read and to load from the cache, ~12 ms of its start here); every other
 * command line runs the whole CLI.
 */
const bundleNameFor = (argv) => (argv[0] === 'validate' ? 'flowmend-validate.cjs' : 'flowmend.cjs');

/** Commands of the whole CLI with a cache of their own; any other command line uses the cache made after all of them. */
const CACHED_COMMANDS = ['run', 'resume', 'status', 'logs', 'runs'];

/**
 * Node flags `serve` runs under (bin/flowmend.cjs passes them on its shell line, which must say the same): a
 * young generation of 16 MiB from the start, its most. V8 starts it at 1 MiB and grows it as it fills, so a
 * serve just started scavenges often and promotes short-lived objects (a step's payloads) into the old
 * generation. And V8's pool of background threads (its compilers, its concurrent marking and sweeping) sized
 * to the machine's cores less one, at least one (`0`: Node's own estimate), instead of Node's fixed 4: on two
 * cores, four of them took the second core from the writer thread and serve's own. docs/performance.md measures
 * both. A short command would pay the bigger space without using it.
 */
const SERVE_NODE_FLAGS = ['--min-semi-space-size=16', '--v8-pool-size=0'];

/**
 * The cache a command line starts from: its command's (`validate`'s in its own bundle), `run` for `flowmend
 * file.json`, `serve`'s when the process runs under SERVE_NODE_FLAGS (V8 rejects a cache made under other
 * flags), else `all`.
 */
const cacheNameFor = (argv, execArgv = process.execArgv) => {
  const first = argv[0] ?? '';
  if (first === 'validate' || CACHED_COMMANDS.includes(first)) return first;
  if (first === 'serve' && SERVE_NODE_FLAGS.every((flag) => execArgv.includes(flag))) return 'serve';
  return first.endsWith('.json') ? 'run' : 'all';
};

/**
 * Where this Node's caches for this build of the bundle are: a V8 of another version finds no file and
 * compiles. The bundle's modification time is in the path because V8 checks only the length of the
 * source a cache was made for: a bundle written again by other means than the build (which deletes the
 * caches) must not meet bytecode of another source of the same length.
 */
const cacheDirFor = (bundle, bundleMtimeMs) => join(dirname(bundle), 'code-cache', `${process.versions.v8}-${process.arch}`, String(Math.floor(bundleMtimeMs)));

const readOrUndefined = (path) => {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
};

/**
 * Compiles and evaluates the bundle as a CommonJS module (the wrapper Node itself uses), with `cacheFile`'s
 * code cache when there is one. Returns its exports (`main`), the script (to make a cache from) and what
 * became of the cache: 'accepted', 'rejected' (compiled from source) or 'missing'.
 */
const loadCliBundle = (bundle, cacheFile) => {
  const source = readFileSync(bundle, 'latin1');
  const cachedData = cacheFile === undefined ? undefined : readOrUndefined(cacheFile);
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: bundle,
    cachedData,
  });
  const module = { exports: {}, filename: bundle };
  script.runInThisContext()(module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  const cache = cachedData === undefined ? 'missing' : script.cachedDataRejected ? 'rejected' : 'accepted';
  return { main: module.exports.main, script, cache };
};

module.exports = { CACHED_COMMANDS, SERVE_NODE_FLAGS, bundleNameFor, cacheDirFor, cacheNameFor, loadCliBundle };
