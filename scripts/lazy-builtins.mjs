// Built-in modules that the CLI bundle loads at their first call. Loading node:crypto takes 6-10 ms of a
// fresh process here, node:child_process ~4 ms (with net and streams) and node:fs/promises ~2 ms (with
// its readline and watcher modules), and `status`, `runs`, `logs` and `cancel` reach modules that import
// them (blob refs, ids, cache keys, the blob files) without calling them, as does a run of a workflow
// without shell nodes (every run loads every runner). The sources keep their plain imports (core may
// import node:crypto and nothing that loads modules); in the bundle, each import from functions/ gets
// functions that require the module when first called. A name not listed here fails the build ("No
// matching export"): add it. A namespace or default import would see only the listed names, so the
// build refuses one.
import { readFileSync } from 'node:fs';

const LAZY = {
  'node:child_process': ['fork', 'spawn'],
  'node:crypto': ['createHash', 'createHmac', 'hash', 'randomBytes', 'randomUUID', 'timingSafeEqual'],
  'node:fs/promises': ['copyFile', 'lstat', 'mkdir', 'open', 'readFile', 'readdir', 'readlink', 'realpath', 'rename', 'rm', 'stat', 'unlink', 'writeFile'],
};

export const lazyBuiltins = {
  name: 'lazy-builtins',
  setup(build) {
    const names = Object.keys(LAZY).map((name) => name.replace(/[/]/g, '\\/'));
    build.onResolve({ filter: new RegExp(`^(${names.join('|')})$`) }, (args) => {
      if (args.namespace !== 'file' || !args.importer.includes('/functions/')) return undefined;
      const whole = new RegExp(`import\\s+(\\*\\s+as\\s+[\\w$]+|[\\w$]+)\\s+from\\s+'${args.path}'`);
      if (whole.test(readFileSync(args.importer, 'utf8'))) {
        return { errors: [{ text: `${args.importer}: import names from ${args.path}, not the whole module (scripts/lazy-builtins.mjs)` }] };
      }
      return { path: args.path, namespace: 'lazy-builtins' };
    });
    build.onLoad({ filter: /.*/, namespace: 'lazy-builtins' }, (args) => ({
      // `require` is the bundle's own: the built-in module is required once, at the first call.
      contents: [
        'let loaded;',
        `const builtin = () => (loaded ??= require(${JSON.stringify(args.path)}));`,
        ...LAZY[args.path].map((name) => `export const ${name} = (...args) => builtin().${name}(...args);`),
      ].join('\n'),
      loader: 'js',
    }));
  },
};
