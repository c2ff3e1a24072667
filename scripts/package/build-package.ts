// What the npm package ships beside the CLI bundle (dist/, scripts/build.mjs), built into lib/ by `npm pack` (prepack):
// the Lambda bundles `flowmend/cdk` deploys from node_modules (no sources to bundle there), the constructs and
// the API client as JavaScript, and their type declarations. Run from the project root:
//   node --import tsx scripts/package/build-package.ts
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { OTEL_FILE } from '../../functions/hosts/lambda/bundled-otel.ts';
import { SECRET_RESOLVER_FILE } from '../../functions/hosts/lambda/bundled-secret-resolver.ts';
import { WAIT_SERVICES_ENTRY, WAIT_SERVICES_FILE } from '../../functions/hosts/lambda/bundled-wait-services.ts';
import { lambdaEsbuildOptions, OTEL_ENTRY, SECRET_RESOLVER_ENTRY } from '../../infra/bundle-options.ts';
import { PREBUILT_PYTHON_DIR, PREBUILT_SIDE_DIR } from '../../infra/prebuilt-code.ts';
import { writePythonRunner } from '../../infra/python-runner.ts';
import { buildSideBundle } from '../../infra/side-bundle.ts';

const root = new URL('../../', import.meta.url).pathname;
process.chdir(root); // the Lambda aliases are relative to the root, as when NodejsFunction bundles
const lib = (...parts: string[]) => join(root, 'lib', ...parts);
for (const dir of ['lambda', 'cdk', 'client', 'types']) rmSync(lib(dir), { recursive: true, force: true });

/** The Lambda entry points: the files of functions/hosts/lambda that export a `handler`. */
const lambdaDir = join(root, 'functions/hosts/lambda');
const handlers = readdirSync(lambdaDir)
  .filter((file) => file.endsWith('.ts') && /^export const handler\b/m.test(readFileSync(join(lambdaDir, file), 'utf8')))
  .map((file) => file.slice(0, -'.ts'.length));

// The very options NodejsFunction gets from the construct (infra/bundle-options.ts), one directory per handler.
await Promise.all(
  handlers.map((handler) =>
    build({
      ...lambdaEsbuildOptions(),
      entryPoints: [`functions/hosts/lambda/${handler}.ts`],
      outfile: lib('lambda', handler, 'index.mjs'),
      sourcemap: false,
    }),
  ),
);
// Every side file a FlowmendFunction may carry beside its bundle (infra/prebuilt-code.ts copies them in at synth).
for (const [entry, file] of [
  [SECRET_RESOLVER_ENTRY, SECRET_RESOLVER_FILE],
  [OTEL_ENTRY, OTEL_FILE],
  [WAIT_SERVICES_ENTRY, WAIT_SERVICES_FILE],
] as const) {
  await buildSideBundle(entry, lib('lambda', PREBUILT_SIDE_DIR, file));
}
// The code node's Python runner, as a synth from the repository writes it.
mkdirSync(lib('lambda', PREBUILT_PYTHON_DIR), { recursive: true });
writePythonRunner(lib('lambda', PREBUILT_PYTHON_DIR));

// The constructs and the client: ES modules, dependencies left to node_modules (aws-cdk-lib and constructs are
// the app's own, as peers). The constructs are told where their prebuilt bundles are (infra/prebuilt-code.ts).
const library = {
  bundle: true,
  format: 'esm' as const,
  platform: 'node' as const,
  target: 'node20',
  packages: 'external' as const,
  logLevel: 'warning' as const,
  legalComments: 'none' as const,
};
await build({
  ...library,
  entryPoints: ['infra/index.ts'],
  outfile: lib('cdk', 'index.js'),
  define: { 'process.env.FLOWMEND_PACKAGE_PREBUILT_LAMBDAS': JSON.stringify('../lambda/') },
});
await build({ ...library, entryPoints: ['functions/hosts/client/flowmend-client.ts'], outfile: lib('client', 'index.js') });

// Declarations from the sources (the native tsc emits them); their imports name .ts files, which the package
// does not ship: they are rewritten to the .js a declaration file is found by.
execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.types.json'], { stdio: 'inherit' });
const rewrite = (dir: string) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) rewrite(path);
    else if (entry.name.endsWith('.d.ts')) writeFileSync(path, readFileSync(path, 'utf8').replace(/(from\s+'\.{1,2}\/[^']*)\.ts'/g, "$1.js'"));
  }
};
rewrite(lib('types'));
// The entry points' declarations where the exports map says (lib/cdk/index.d.ts, lib/client/index.d.ts).
writeFileSync(lib('cdk', 'index.d.ts'), "export * from '../types/infra/index.js';\n");
writeFileSync(lib('client', 'index.d.ts'), "export * from '../types/functions/hosts/client/flowmend-client.js';\n");
console.log(`flowmend package: ${handlers.length} Lambda bundles and the Python runner, flowmend/cdk, flowmend/client and their types in lib/`);
