// Bundles the CLI into dist/ with esbuild (run by `npm run build`, and by `prepare` on npm ci/install), so
// `flowmend` starts without transpiling TypeScript, and makes the V8 code caches it starts from (see
// bin/cli-bundle.cjs and scripts/code-cache.mjs).
//
// One CommonJS file, not ES module chunks: Node 20 caches compiled code for classic scripts only (vm.Script
// `cachedData`). esbuild turns each `import()` of a bundled module into a lazy init, so a command still
// evaluates only the modules it uses (`validate` never evaluates the run model, the store or the interpreter).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { writeCodeCaches } from './code-cache.mjs';
import { directCoreImports } from './direct-core-imports.mjs';
import { interpreterPatches } from './interpreter-patches.mjs';
import { buildAslValidator, lazyAslValidator } from './lazy-asl-validator.mjs';
import { lazyBuiltins } from './lazy-builtins.mjs';
import { noAwsLambdaInInterpreter } from './no-aws-lambda-in-interpreter.mjs';

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // Installed without dev dependencies: bin/flowmend.cjs runs the TypeScript through tsx instead.
  console.warn('flowmend build: esbuild is not installed; the CLI will run from source (slower start)');
  process.exit(0);
}

const root = new URL('..', import.meta.url).pathname;
const bundle = `${root}dist/flowmend.cjs`;
const validateBundle = `${root}dist/flowmend-validate.cjs`;
rmSync(`${root}dist`, { recursive: true, force: true });

/**
 * For `validate`'s own bundle (bin/cli-bundle.cjs's bundleNameFor): the modules of the other commands are
 * left out, so the file is a third of the whole CLI's. The bin runs it only for a command line that starts
 * with `validate`, which cli-args parses as that command or refuses; reaching another command's module
 * there would be a bug of the build, and says so.
 */
const validateOnly = {
  name: 'validate-only',
  setup(build) {
    const otherCommands = /\/(local-commands|remote-commands|serve|viewer-commands)\.ts$/;
    build.onResolve({ filter: otherCommands }, (args) =>
      args.importer.endsWith('hosts/cli/commands.ts') ? { path: args.path, namespace: 'not-validate' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'not-validate' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`flowmend: ${args.path} is not in the validate bundle (dist/flowmend-validate.cjs)`)});`,
      loader: 'js',
    }));
  },
};

const cliOptions = {
  absWorkingDir: root,
  entryPoints: ['bin/cli-main.ts'],
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  // Resolved from node_modules at run time: large and loaded only by the commands that use them (the AWS SDK,
  // the Anthropic SDK; hono, croner, the MCP SDK and ajv for `serve`, MCP nodes and `validate --online`; yaml
  // for a .pflow.md), which keeps the file every command reads and its caches ~40% smaller. better-sqlite3's
  // JavaScript is bundled (every command opens the store: required from node_modules, its dozen files took ~10 ms
  // of each start to find, read and compile); its native addon is loaded by path (openSqlite), so `bindings`, which
  // it requires only to search for the addon, stays out. Its version is pinned, so the bundled JavaScript is the
  // addon's own. esbuild stays external: the run viewer falls back to building its page in memory only when
  // dist/viewer is missing.
  external: [
    'bindings',
    '@aws-sdk/*',
    '@smithy/*',
    '@anthropic-ai/sdk',
    'esbuild',
    'hono',
    'hono/*',
    '@hono/*',
    'croner',
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/sdk/*',
    'ajv',
    'ajv-formats',
    // pflow's .pflow.md parser's YAML: required only when a markdown workflow is read.
    'yaml',
    // OpenTelemetry's SDK and exporters: loaded only when an exporter is configured (functions/hosts/telemetry).
    '@opentelemetry/*',
  ],
  // `import()` of a package left external becomes a require: a script compiled by vm.Script has no ES module
  // loader to call (importModuleDynamically does not survive a code cache on Node 20: "A dynamic import callback
  // was not specified"). Every external package has a CommonJS entry.
  supported: { 'dynamic-import': false },
  // The bundle is CommonJS: where the sources ask for their own URL (the shipped definition memo, the viewer's
  // assets), they get the bundle's.
  define: { 'import.meta.url': '__flowmendUrl' },
  banner: { js: "const __flowmendUrl = require('node:url').pathToFileURL(__filename).href;" },
  plugins: [noAwsLambdaInInterpreter, interpreterPatches({ root }), directCoreImports({ root }), lazyAslValidator, lazyBuiltins],
  // Smaller files parse faster at every start; identifiers stay (error names and stack traces read them).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
};
await esbuild.build({ ...cliOptions, outfile: bundle });
await esbuild.build({ ...cliOptions, outfile: validateBundle, plugins: [validateOnly, ...cliOptions.plugins] });
// `serve`'s worker threads (functions/hosts/local/worker-pool-launcher.ts finds it beside the CLI bundle): a
// worker starts from a file, and the bundle's modules are not files.
const serveWorkerBundle = `${root}dist/serve-worker.cjs`;
await esbuild.build({ ...cliOptions, entryPoints: ['functions/hosts/local/serve-worker.ts'], outfile: serveWorkerBundle });
// `serve`'s writer thread (functions/adapters/sqlite-writer-thread.ts finds it beside the CLI bundle).
const sqliteWriterBundle = `${root}dist/sqlite-writer.cjs`;
await esbuild.build({ ...cliOptions, entryPoints: ['functions/adapters/sqlite-writer-entry.ts'], outfile: sqliteWriterBundle });

// `serve`'s command helper, a process of its own (functions/hosts/local/command-helper.ts finds it beside the CLI bundle).
const commandHelperBundle = `${root}dist/command-helper.cjs`;
await esbuild.build({ ...cliOptions, entryPoints: ['functions/hosts/local/command-helper-entry.ts'], outfile: commandHelperBundle });

const bundles = [bundle, validateBundle, serveWorkerBundle, sqliteWriterBundle, commandHelperBundle];
for (const file of bundles) {
  // No `import()` may be left (see `supported` above): it would fail only when reached, far from the build.
  const left = readFileSync(file, 'utf8').match(/.{0,60}[^\w$.]import\(.{0,40}/);
  if (left) throw new Error(`flowmend build: ${file} still calls import(): ${left[0]}`);
}

// esbuild escapes non-ASCII in strings but not in regular expressions (secret-source.ts's ⟦ ⟧). A file of
// ASCII only is read as latin1, straight into a one-byte string: decoding UTF-8 made a two-byte string of
// the whole bundle, ~10 ms of every start here. \u escapes mean the same in a regular expression.
for (const file of bundles) {
  const source = readFileSync(file, 'utf8');
  const ascii = source.replace(/[^ -~\t\n\r]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (ascii !== source) writeFileSync(file, ascii);
}

await buildAslValidator(esbuild, root);

// The transform node's worker thread (functions/nodes/jsonata-worker.ts finds it beside the CLI bundle): its
// own file with jsonata inside, since a worker starts from a file and the bundle's modules are not files.
await esbuild.build({
  absWorkingDir: root,
  entryPoints: ['functions/nodes/transform-worker.ts'],
  outfile: `${root}dist/transform-worker.cjs`,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
  // Core is pure by rule: only the one helper the worker uses is kept, not zod and every core schema.
  plugins: [
    {
      name: 'core-without-side-effects',
      setup(build) {
        build.onResolve({ filter: /\/core\/.*\.ts$/ }, (args) => ({ path: `${args.resolveDir}/${args.path}`, sideEffects: false }));
      },
    },
  ],
});

// The caches and the shipped definition memo come from running the bundle: a failure costs only speed (each
// command compiles, the first command on each state dir validates the definition), so it warns.
try {
  writeCodeCaches(root);
} catch (error) {
  console.warn(`flowmend build: no code caches (the CLI starts slower): ${error.message}`);
}

// The run viewer's page (issue 16: static assets bundled at build time): served from dist/viewer by `serve`.
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { viewer: 'functions/hosts/viewer/ui/main.ts' },
  outdir: 'dist/viewer',
  bundle: true,
  minify: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  legalComments: 'none',
  logLevel: 'warning',
});
