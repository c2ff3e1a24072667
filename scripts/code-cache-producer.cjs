// Makes one V8 code cache for the CLI bundle (run by scripts/code-cache.mjs, one process per cache so that
// each cache holds what its commands compiled and nothing else): loads the bundle without a cache, runs the
// given command lines through its `main`, then writes `script.createCachedData()`, which by then holds the
// functions those commands compiled lazily as well as the top level.
// Usage: node scripts/code-cache-producer.cjs <bundle> <cache file> '<JSON array of argv arrays>'
'use strict';
const { mkdirSync, writeFileSync } = require('node:fs');
const { dirname } = require('node:path');
const { loadCliBundle } = require('../bin/cli-bundle.cjs');

const [bundle, cacheFile, lines] = process.argv.slice(2);
const { main, script } = loadCliBundle(bundle, undefined);
(async () => {
  for (const argv of JSON.parse(lines)) {
    const code = await main(argv);
    if (code !== 0) throw new Error(`flowmend ${argv.join(' ')} exited ${code}`);
  }
  mkdirSync(dirname(cacheFile), { recursive: true });
  writeFileSync(cacheFile, script.createCachedData());
  process.exitCode = 0;
})();
