// Cold start of each Lambda: bundles every handler exactly as `cdk deploy` does (esbuild with the
// options of infra/bundle-options.ts), then, in a fresh Node process per bundle, times the import
// and the first call (fed a bad event, so it builds its clients and then throws, and the error's
// stack is read as the Lambda runtime does when it logs it). Prints bytes and ms; no assertions.
// `BENCH_SOURCE_MAPS=1` measures the old setting (linked .map files and --enable-source-maps).
// Runners also get the secret resolver's own file beside their bundle (the construct's afterBundling
// step, same esbuild arguments), timed as the extra import a node with a secret input pays. Two floors
// come first: an empty module, and a bundle of zod with one schema (every Lambda here parses with zod).
// Advance is timed once more with an OTLP endpoint set and the OpenTelemetry SDK's side file beside it
// (bundled-otel.ts): the first call then loads the SDK and exports before it returns.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { OTEL_FILE } from '../functions/hosts/lambda/bundled-otel.ts';
import { SECRET_RESOLVER_FILE } from '../functions/hosts/lambda/bundled-secret-resolver.ts';
import { OTEL_ENTRY } from '../infra/bundle-options.ts';
import { buildSideBundle } from '../infra/side-bundle.ts';
import { bundleLambda, bundleSecretResolver } from './lambda-bundle.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SOURCE_MAPS = process.env.BENCH_SOURCE_MAPS === '1';
const lambdaDir = fileURLToPath(new URL('../functions/hosts/lambda/', import.meta.url));
const handlers = readdirSync(lambdaDir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.replace(/\.ts$/, ''))
  .filter(
    (name) =>
      !['aws-deps', 'run-node', 'lambda-credentials', 'bundled-secret-resolver', 'bundled-otel', 'lambda-telemetry', 'telemetry-settle'].includes(name) &&
      !name.endsWith('-deps'),
  );

/** What the stack puts in each function's environment (values that need no network to build clients). */
const FAKE_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'bench',
  AWS_SECRET_ACCESS_KEY: 'bench',
  TABLE_NAME: 'bench-table',
  BUCKET_NAME: 'bench-bucket',
  EXPRESS_STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:bench-express',
  STANDARD_STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:000000000000:stateMachine:bench-standard',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

// Runs in the child: import, then one call with an event no handler accepts.
const PROBE = `
const t0 = performance.now();
const mod = await import(process.argv[1]);
const t1 = performance.now();
let stackChars = 0;
try { await mod.handler({ bench: true }); } catch (error) { stackChars = String(error.stack).length; }
const t2 = performance.now();
console.log(JSON.stringify({ importMs: t1 - t0, firstCallMs: t2 - t1, stackChars }));
`;

// Runs in the child: the handler's import, then the extra import of its secret resolver's file.
const SIDE_PROBE = `
await import(process.argv[1]);
const t0 = performance.now();
await import(process.argv[2]);
console.log(JSON.stringify({ importMs: performance.now() - t0, firstCallMs: 0 }));
`;

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

/** Median import and first-call times of a bundle over ROUNDS fresh processes. */
const probe = (file: string, side?: string, extraEnv: Record<string, string> = {}): { importMs: number; callMs: number } => {
  const runs = Array.from({ length: ROUNDS }, () => {
    const files = [file, ...(side === undefined ? [] : [side])].map((f) => pathToFileURL(f).href);
    const stdout = execFileSync(
      process.execPath,
      [...(SOURCE_MAPS ? ['--enable-source-maps'] : []), '--input-type=module', '-e', side === undefined ? PROBE : SIDE_PROBE, ...files],
      {
        env: { PATH: process.env.PATH ?? '', ...FAKE_ENV, ...extraEnv },
        encoding: 'utf8',
      },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as { importMs: number; firstCallMs: number };
  });
  return { importMs: median(runs.map((r) => r.importMs)), callMs: median(runs.map((r) => r.firstCallMs)) };
};

const out = mkdtempSync(join(tmpdir(), 'flowmend-cold-'));
try {
  console.log(
    `cold start per Lambda: ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}, median of ${ROUNDS} fresh processes, source maps ${SOURCE_MAPS ? 'ON' : 'off'}, load average ${loadavg()[0]?.toFixed(1)}`,
  );
  console.log(`${'lambda'.padEnd(16)} ${'bundle KB'.padStart(10)} ${'import ms'.padStart(10)} ${'1st call ms'.padStart(12)}`);
  const row = (name: string, file: string, timed: { importMs: number; callMs: number }): void => {
    const kb = statSync(file).size / 1024;
    console.log(`${name.padEnd(16)} ${kb.toFixed(0).padStart(10)} ${timed.importMs.toFixed(1).padStart(10)} ${timed.callMs.toFixed(1).padStart(12)}`);
  };
  // An empty module, timed the same way: what this machine charges any import right now.
  const empty = join(out, 'empty.mjs');
  writeFileSync(empty, 'export const handler = async () => { throw new Error("empty"); };\n');
  row('(empty)', empty, probe(empty));
  // The project's zod (zod/mini) and one schema, bundled as a handler: the floor of any Lambda that parses with zod.
  const zodBundle = join(out, 'zod-only', 'index.mjs');
  await bundleLambda(fileURLToPath(new URL('./cold-start-zod-floor.ts', import.meta.url)), zodBundle, { minify: true, sourcemap: SOURCE_MAPS });
  row('(zod only)', zodBundle, probe(zodBundle));
  for (const name of handlers) {
    const outfile = join(out, name, 'index.mjs');
    await bundleLambda(join(lambdaDir, `${name}.ts`), outfile, { minify: true, sourcemap: SOURCE_MAPS });
    row(name, outfile, probe(outfile));
    if (name === 'advance') {
      // Nothing listens on port 9: the export fails at once, as it would against a collector that is down.
      await buildSideBundle(fileURLToPath(new URL(`../${OTEL_ENTRY}`, import.meta.url)), join(out, name, OTEL_FILE));
      row(`  + OTLP (${OTEL_FILE})`, join(out, name, OTEL_FILE), probe(outfile, undefined, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' }));
    }
    if (name.startsWith('run-')) {
      const side = join(out, name, SECRET_RESOLVER_FILE);
      await bundleSecretResolver(side);
      row(`  + ${SECRET_RESOLVER_FILE}`, side, probe(outfile, side));
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
