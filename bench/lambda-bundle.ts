// One Lambda handler bundled exactly as `cdk deploy` bundles it (esbuild with infra/bundle-options.ts),
// for the benches that time or profile its import.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ESM_REQUIRE_SHIM, LAMBDA_ALIASES, LAMBDA_NODE_TARGET, SECRET_RESOLVER_ENTRY, sideBundleArgs } from '../infra/bundle-options.ts';

const PROJECT_ROOT = fileURLToPath(new URL('../', import.meta.url));

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

/** The secret resolver's file beside a runner's bundle: the very esbuild command the construct's afterBundling hook runs. */
export const bundleSecretResolver = (outfile: string): void => {
  execFileSync(`${PROJECT_ROOT}node_modules/.bin/esbuild`, sideBundleArgs(SECRET_RESOLVER_ENTRY, outfile), { cwd: PROJECT_ROOT, stdio: 'inherit' });
};
