#!/bin/sh
":" //; case "$1" in validate) case " $* " in *" --online"*) ;; *) unset NODE_EXTRA_CA_CERTS ;; esac ;; status|runs|logs) case " $* " in *" --api"*|*" --store"*) ;; *) [ -n "$FLOWMEND_API_URL" ] || unset NODE_EXTRA_CA_CERTS ;; esac ;; serve) exec node --min-semi-space-size=16 --v8-pool-size=0 "$0" "$@" ;; esac; case " $NODE_OPTIONS " in *" --use-openssl-ca"*) ;; *) [ -z "${NODE_EXTRA_CA_CERTS+set}" ] || { FLOWMEND_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS; export FLOWMEND_EXTRA_CA_CERTS; unset NODE_EXTRA_CA_CERTS; } ;; esac; exec node "$0" "$@"
// The `flowmend` bin: runs the bundle that `npm run build` (and `prepare`, on npm ci) writes to dist/,
// which starts without transpiling, from the V8 code cache the build made (bin/cli-bundle.cjs). When the
// bundle is missing (an install without dev dependencies) or, in a working copy, older than a source file
// (a fresh edit), it runs the TypeScript through tsx instead.
// Both a shell script and JavaScript: run as a program, /bin/sh reads the line above (":" is its no-op) and
// execs Node on this file, which reads that line as a string and a comment. Node 20 reads and parses every
// certificate in NODE_EXTRA_CA_CERTS before it runs any JavaScript (40 ms here, with Debian's bundle of
// 144). The shell drops the variable for the commands that open no connection and start no program:
// `validate` without --online, and `status`, `runs` and `logs` on the local store (no --api, no
// FLOWMEND_API_URL, no --store). Every other command but `serve` (which starts once) gets it under
// another name, FLOWMEND_EXTRA_CA_CERTS, and starts without it: the CLI puts it back in process.env for
// the programs it starts, and reads the file when it first makes a TLS context
// (functions/adapters/extra-ca-certs.ts); most runs make none. Not under --use-openssl-ca in NODE_OPTIONS:
// Node then adds the file to OpenSSL's store, which the CLI's wrap (Node's bundled roots) would replace.
// Run as `node bin/flowmend.cjs`, Node skips the first
// line and the second does nothing. `serve` runs under SERVE_NODE_FLAGS (bin/cli-bundle.cjs), which the
// line names again (a shell cannot read them from JavaScript; a test holds the two to the same flags).
// CommonJS, not an ES module: an ES entry point sets up Node's ES module loader first (~10-15 ms of
// every start here), and an ES import of node:fs reads all its exports, whose ReadStream getter loads
// the streams modules that `validate` never uses.
'use strict';
const { readdirSync, statSync } = require('node:fs');
const { dirname } = require('node:path');
const { bundleNameFor, cacheDirFor, cacheNameFor, loadCliBundle } = require('./cli-bundle.cjs');

const root = `${dirname(__dirname)}/`;
const argv = process.argv.slice(2);

const mtime = (path) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;

// The command line's bundle (`validate` has its own), or the whole CLI where a build older than that left none.
let bundle = `${root}dist/${bundleNameFor(argv)}`;
let built = mtime(bundle);
if (built === undefined) {
  bundle = `${root}dist/flowmend.cjs`;
  built = mtime(bundle);
}

/**
 * Newest modification time among the CLI's sources (bin/flowmend.ts, bin/cli-main.ts and functions/).
 * Directory entries with their types and string paths: ~3-9 ms for ~230 files here, where a recursive
 * listing and a stat per URL took 17 ms of every start.
 */
const newestSource = () => {
  let newest = Math.max(mtime(`${root}bin/flowmend.ts`) ?? 0, mtime(`${root}bin/cli-main.ts`) ?? 0);
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(`${dir}${entry.name}/`);
      else if (entry.name.endsWith('.ts')) newest = Math.max(newest, mtime(`${dir}${entry.name}`) ?? 0);
    }
  };
  walk(`${root}functions/`);
  return newest;
};

// An installed package (below node_modules) is nobody's working copy: it runs the bundle its install built,
// without the walk (5-9 ms of every command here).
const installed = root.includes('/node_modules/');
if (built !== undefined && (installed || built >= newestSource())) {
  const { main } = loadCliBundle(bundle, `${cacheDirFor(bundle, built)}/${cacheNameFor(argv)}.bin`);
  // main sets the exit code, or ends the process (bin/cli-main.ts); a rejection (a bug) ends it as an
  // unhandled one would.
  main(argv, { endProcess: true });
} else {
  import('tsx/esm/api').then(
    ({ register }) => {
      register();
      return import(require('node:url').pathToFileURL(`${__dirname}/flowmend.ts`).href);
    },
    // No bundle and no tsx: a checkout whose dependencies were never installed (or an install without the dev
    // ones that failed to build). Said plainly, in the output format asked for, instead of Node's stack.
    () => {
      const message = `not built (no dist/ here), and tsx (a dev dependency) is not installed to run it from source: run \`npm ci\` in ${root}`;
      const json = argv.some((arg, i) => arg === '--output-format=json' || (arg === '--output-format' && argv[i + 1] === 'json'));
      if (json) process.stdout.write(`${JSON.stringify({ success: false, status: 'failed', error: message }, null, 2)}\n`);
      else process.stderr.write(`flowmend: ${message}\n`);
      process.exitCode = 1;
    },
  );
}
