// One Lambda handler bundled exactly as `cdk deploy` bundles it (esbuild with infra/bundle-options.ts),
// for the benches that time or profile its import.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { lambdaEsbuildOptions, SECRET_RESOLVER_ENTRY } from '../infra/bundle-options.ts';
import { buildSideBundle } from '../infra/side-bundle.ts';

/** `minify: true` minifies as the stack does (LAMBDA_MINIFY); `false` not at all (the profile bench's attribution). */
export const bundleLambda = async (entry: string, outfile: string, options: { minify: boolean; sourcemap?: boolean }): Promise<void> => {
  const unminified = { minifyWhitespace: false, minifySyntax: false, minifyIdentifiers: false };
  await build({ ...lambdaEsbuildOptions(), ...(options.minify ? {} : unminified), entryPoints: [entry], outfile, sourcemap: options.sourcemap ?? false });
};

/** The secret resolver's file beside a runner's bundle: the very build the construct's afterBundling hook runs. */
export const bundleSecretResolver = (outfile: string): Promise<void> =>
  buildSideBundle(fileURLToPath(new URL(`../${SECRET_RESOLVER_ENTRY}`, import.meta.url)), outfile);
