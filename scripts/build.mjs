// Bundles the CLI into dist/ with esbuild (run by `npm run build`, and by `prepare` on npm ci/install),
// so `flowmend` starts without transpiling TypeScript. Chunks split at dynamic imports: a command loads
// the state machine interpreter, the SQLite module or the AWS SDK only when it uses them.
import { rmSync } from 'node:fs';

let esbuild;
try {
  esbuild = await import('esbuild');
} catch {
  // Installed without dev dependencies: bin/flowmend.mjs runs the TypeScript through tsx instead.
  console.warn('flowmend build: esbuild is not installed; the CLI will run from source (slower start)');
  process.exit(0);
}

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
  external: ['better-sqlite3', '@aws-sdk/*', '@smithy/*', '@anthropic-ai/sdk'],
  // CommonJS dependencies bundled into ESM still call require().
  banner: { js: "import { createRequire as __flowmendRequire } from 'node:module'; const require = __flowmendRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
