// One Lambda handler bundled exactly as `cdk deploy` bundles it (esbuild with infra/bundle-options.ts),
// for the benches that time or profile its import.
import { build } from 'esbuild';
import { ESM_REQUIRE_SHIM, LAMBDA_ALIASES, LAMBDA_NODE_TARGET } from '../infra/bundle-options.ts';

export const bundleLambda = async (entry: string, outfile: string, options: { minify: boolean; sourcemap?: boolean }): Promise<void> => {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: LAMBDA_NODE_TARGET,
    mainFields: ['module', 'main'],
    minify: options.minify,
    sourcemap: options.sourcemap ?? false,
    banner: { js: ESM_REQUIRE_SHIM },
    alias: { ...LAMBDA_ALIASES },
    logLevel: 'error',
  });
};
