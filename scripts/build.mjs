// Bundles the CLI into dist/ with esbuild (run by `npm run build`, and by `prepare` on npm ci/install),
// so `flowmend` starts without transpiling TypeScript. Chunks split at dynamic imports: a command loads
// the state machine interpreter, the SQLite module or the AWS SDK only when it uses them.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { directCoreImports } from './direct-core-imports.mjs';
import { buildAslValidator, lazyAslValidator } from './lazy-asl-validator.mjs';

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // Installed without dev dependencies: bin/flowmend.mjs runs the TypeScript through tsx instead.
  console.warn('flowmend build: esbuild is not installed; the CLI will run from source (slower start)');
  process.exit(0);
}

/**
 * aws-local-stepfunctions imports the AWS SDK's Lambda client to call Tasks that have no local handler.
 * The local host binds every Task by state name, so that path never runs: a stub keeps the client out of
 * every local run, and throws if ever reached. asl-validator stays: the local host validates the
 * definition as Step Functions does before it runs it (issue 12: what AWS refuses, the laptop refuses).
 */
const noAwsLambdaInInterpreter = {
  name: 'no-aws-lambda-in-interpreter',
  setup(build) {
    build.onResolve({ filter: /^(@aws-sdk\/(client-lambda|credential-providers))$/ }, (args) =>
      args.importer.includes('aws-local-stepfunctions') ? { path: args.path, namespace: 'flowmend-stub' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'flowmend-stub' }, () => ({
      contents: `const unbound = () => { throw new Error('flowmend: the local interpreter reached for AWS Lambda, which the local host never uses'); };
        export class LambdaClient { constructor() { unbound(); } }
        export class InvokeCommand { constructor() { unbound(); } }
        export const fromCognitoIdentityPool = unbound;
        export default unbound;`,
      loader: 'js',
    }));
  },
};

const root = new URL('..', import.meta.url).pathname;
rmSync(`${root}dist`, { recursive: true, force: true });
await esbuild.build({
  absWorkingDir: root,
  entryPoints: { flowmend: 'bin/flowmend.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  outExtension: { '.js': '.mjs' },
  // Native (better-sqlite3) or large and only loaded on request (the AWS SDK, the Anthropic SDK): resolved from node_modules at run time.
  // esbuild stays external: the run viewer falls back to building its page in memory only when dist/viewer is missing.
  external: ['better-sqlite3', '@aws-sdk/*', '@smithy/*', '@anthropic-ai/sdk', 'esbuild'],
  // CommonJS dependencies bundled into ESM still call require().
  banner: { js: "import { createRequire as __flowmendRequire } from 'node:module'; const require = __flowmendRequire(import.meta.url);" },
  plugins: [noAwsLambdaInInterpreter, directCoreImports({ root }), lazyAslValidator],
  // Smaller files parse faster at every start; identifiers stay (error names and stack traces read them).
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  logLevel: 'warning',
});

await buildAslValidator(esbuild, root);

// The definition the CLI runs by default, validated here once (functions/hosts/local/definition-memo.ts):
// one run of the bundle on a scratch state dir, whose memo becomes dist/validated-definitions. A failure
// costs only speed (the first command on each state dir validates instead), so it warns.
{
  const scratch = mkdtempSync(join(tmpdir(), 'flowmend-build-'));
  try {
    const workflow = join(scratch, 'noop.json');
    writeFileSync(workflow, JSON.stringify({ nodes: [{ id: 'noop', type: 'transform', params: { expression: '1' } }], edges: [] }));
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FLOWMEND_')));
    const state = join(scratch, 'state');
    const run = spawnSync(process.execPath, [`${root}dist/flowmend.mjs`, 'run', workflow, '--state-dir', state, '--output-format', 'json'], {
      env,
      encoding: 'utf8',
    });
    const memo = join(state, 'validated-definitions');
    if (run.status === 0 && existsSync(memo)) cpSync(memo, `${root}dist/validated-definitions`, { recursive: true });
    else console.warn(`flowmend build: could not pre-validate the default definition (exit ${run.status}): ${(run.stderr || run.stdout).slice(0, 500)}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
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
