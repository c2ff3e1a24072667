// Builds a second bundle beside a Lambda's index.mjs with the handler's esbuild options (bundle-options.ts).
// NodejsFunction's afterBundling hook runs it as a script (`node --import tsx infra/side-bundle.ts ENTRY OUTFILE`);
// bench/cold-start.ts calls buildSideBundle itself, so both build the very same file.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { lambdaEsbuildOptions } from './bundle-options.ts';

/**
 * Core's modules declared free of side effects, so that only the ones the entry uses are kept. Core's
 * top level builds zod schemas (calls esbuild must otherwise keep): the secret resolver imports two error
 * classes through core/index.ts, and without this its file carried zod and every core schema (357 KB
 * instead of ~245). Core is pure by rule (ARCHITECTURE.md), and the bundling test runs the file.
 */
const coreWithoutSideEffects: Plugin = {
  name: 'core-without-side-effects',
  setup(pluginBuild) {
    pluginBuild.onResolve({ filter: /\.ts$/ }, (args) => {
      if (!args.path.startsWith('.')) return undefined;
      const path = resolve(args.resolveDir, args.path);
      return /[\\/]functions[\\/]core[\\/]/.test(path) ? { path, sideEffects: false } : undefined;
    });
  },
};

export const buildSideBundle = async (entry: string, outfile: string): Promise<void> => {
  await build({ ...lambdaEsbuildOptions(), entryPoints: [entry], outfile, sourcemap: false, plugins: [coreWithoutSideEffects] });
};

// As a script: `node --import tsx infra/side-bundle.ts ENTRY OUTFILE`, run from the project root (the aliases are relative to it).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [entry, outfile] = process.argv.slice(2);
  if (entry === undefined || outfile === undefined) {
    console.error('usage: node --import tsx infra/side-bundle.ts ENTRY OUTFILE');
    process.exit(2);
  }
  await buildSideBundle(entry, outfile);
}
