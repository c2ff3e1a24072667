/**
 * How every Lambda is bundled, in one place so that `bench/cold-start.ts` measures the very bundles
 * `cdk deploy` uploads (the construct passes these to NodejsFunction, the bench to esbuild).
 */

// An ESM bundle has no `require`; CommonJS dependencies that require Node built-ins need this shim.
export const ESM_REQUIRE_SHIM =
  "import { createRequire as __flowmendCreateRequire } from 'node:module'; const require = __flowmendCreateRequire(import.meta.url);";

/** The Lambda runtime's Node major; esbuild targets it. */
export const LAMBDA_NODE_TARGET = 'node24';

/**
 * No source maps in production: with `--enable-source-maps` the first `error.stack` of a cold start
 * parsed megabytes of maps (230-390 ms), and errors are ordinary control flow here (stale writes).
 * Stacks name the functions as written (identifiers are not minified, below).
 */
export const LAMBDA_SOURCE_MAP = false;

/**
 * Whitespace and syntax minified, identifiers kept. Renaming identifiers made the bundles smaller but
 * slower to import: alternating fresh processes (25 rounds each), Advance imported in 58-59 ms with its
 * identifiers renamed and 51-52 ms with them kept, and StartRun, the API and Repair 6-11 ms faster
 * kept (RunShell and MarkInterrupted the same), although the files are 50-65% larger. The stacks in
 * the logs name functions as written.
 */
export const LAMBDA_MINIFY = { minifyWhitespace: true, minifySyntax: true, minifyIdentifiers: false } as const;

/**
 * Modules replaced in every Lambda bundle (esbuild `alias`; paths from the project root, where
 * bundling runs). The SDK's node credential chain becomes the environment provider Lambda needs
 * (functions/hosts/lambda/lambda-credentials.ts says why): 100 KB less in each bundle.
 */
export const LAMBDA_ALIASES: Readonly<Record<string, string>> = {
  '@aws-sdk/credential-provider-node': './functions/hosts/lambda/lambda-credentials.ts',
};

/** The secret resolver's own file beside each runner's bundle (functions/hosts/lambda/bundled-secret-resolver.ts says why). */
export const SECRET_RESOLVER_ENTRY = 'functions/adapters/aws-secret-resolver.ts';

/** The OpenTelemetry SDK's own file beside the bundles of the functions that write runs (functions/hosts/lambda/bundled-otel.ts). */
export const OTEL_ENTRY = 'functions/adapters/otel/otel-telemetry.ts';

/** One POSIX shell word (afterBundling hooks are shell commands). */
export const shellWord = (arg: string): string => `'${arg.replaceAll("'", `'\\''`)}'`;

/**
 * The esbuild options every Lambda bundle shares, for the builds that call esbuild themselves: the
 * side file beside a runner (side-bundle.ts) and the benches' bundles (bench/lambda-bundle.ts). The
 * construct hands the same values to NodejsFunction's bundling props.
 */
export const lambdaEsbuildOptions = () => ({
  bundle: true,
  format: 'esm' as const,
  platform: 'node' as const,
  target: LAMBDA_NODE_TARGET,
  mainFields: ['module', 'main'],
  banner: { js: ESM_REQUIRE_SHIM },
  alias: { ...LAMBDA_ALIASES },
  ...LAMBDA_MINIFY,
  logLevel: 'error' as const,
});
