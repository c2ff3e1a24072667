// The npm package as a user gets it: `npm pack` of this checkout, then `npm install <tarball>` in a new directory
// outside the repository, from the local npm cache. Done once per test file; every test then works in that directory.
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const REPO = fileURLToPath(new URL('../../..', import.meta.url));

const CDK_PEERS = ['aws-cdk-lib', 'constructs'];

/**
 * Where the package test leaves the cloud assembly of init's app (and its workflow) for the emulator's
 * scenario (test/emulator/package-app.test.ts), which npm test runs after the unit project.
 */
export const PACKAGE_APP_ASSEMBLY = join(REPO, 'node_modules', '.cache', 'flowmend-package', 'cdk.out');
export const PACKAGE_APP_STACK = 'MyFlows';

export interface Exec {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs a program to its end (never throws for a non-zero exit: the caller asserts on it). */
export const exec = async (file: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Exec> => {
  try {
    const { stdout, stderr } = await promisify(execFile)(file, [...args], {
      cwd: options.cwd,
      env: options.env ?? userEnv(),
      timeout: options.timeoutMs ?? 300_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { stdout, stderr, code: 0 };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string; code?: number | string };
    return { stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error), code: typeof failed.code === 'number' ? failed.code : -1 };
  }
};

/** A user's environment: none of the test runner's flowmend or AWS settings, no CI secrets; npm quiet. */
export const userEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' };
  for (const name of Object.keys(env)) {
    if (/^(FLOWMEND_|ANTHROPIC_|OTEL_|VITEST|NODE_OPTIONS$|TRACEPARENT$)/.test(name)) delete env[name];
  }
  return { ...env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false', ...extra };
};

export interface PackedFile {
  path: string;
  size: number;
}

export interface InstalledPackage {
  /** The new project directory (outside the repository) where the tarball is installed. */
  dir: string;
  /** Its parent, a temporary directory removed by cleanup. */
  work: string;
  tarball: string;
  /** The tarball's size and what it unpacks to, bytes. */
  packedBytes: number;
  unpackedBytes: number;
  files: PackedFile[];
  /** Wall time of `npm install <tarball>`, ms. */
  installMs: number;
  /** The installed CLI's bin (node_modules/.bin/flowmend). */
  bin: string;
  cleanup: () => void;
}

/**
 * better-sqlite3's prebuilt binary for this Node, as prebuild-install would download it from the package's GitHub
 * release (closed here): made from the one `npm ci` built for the repository, and found through prebuild-install's
 * `local-prebuilds` setting. Without it the install compiles SQLite (minutes on 2 cores), which a user with a
 * network never does.
 */
const localPrebuild = async (work: string): Promise<NodeJS.ProcessEnv> => {
  const module = join(REPO, 'node_modules', 'better-sqlite3');
  const { version } = (await import(join(module, 'package.json'), { with: { type: 'json' } })).default as { version: string };
  const dir = join(work, 'prebuilds');
  mkdirSync(dir);
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const packed = await exec('tar', ['-czf', join(dir, name), '-C', module, 'build/Release/better_sqlite3.node'], { cwd: work });
  if (packed.code !== 0) throw new Error(`could not pack better-sqlite3's binary: ${packed.stderr}`);
  return { npm_config_better_sqlite3_local_prebuilds: dir };
};

/** Packs the package (its library build first) and installs the tarball into a new directory. */
export async function packAndInstall(): Promise<InstalledPackage> {
  if (!existsSync(join(REPO, 'dist', 'flowmend.cjs'))) throw new Error('no CLI bundle: run `node scripts/build.mjs` first (npm test does)');
  const work = mkdtempSync(join(tmpdir(), 'flowmend-package-'));
  const cleanup = () => {
    // The links to the repository's CDK go first, so that nothing can reach through them.
    for (const name of CDK_PEERS) {
      const link = join(work, 'my-flows', 'node_modules', name);
      if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(link);
    }
    rmSync(work, { recursive: true, force: true });
  };
  try {
    // The library part of `prepack`, then a pack without scripts: `prepare` would rebuild dist/ under the CLI
    // tests that run meanwhile (npm test built it before vitest).
    const built = await exec(process.execPath, ['--import', 'tsx', 'scripts/package/build-package.ts'], { cwd: REPO, env: process.env });
    if (built.code !== 0) throw new Error(`the package build failed:\n${built.stdout}\n${built.stderr}`);
    const pack = await exec('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], { cwd: REPO });
    if (pack.code !== 0) throw new Error(`npm pack failed:\n${pack.stderr}`);
    const [packed] = JSON.parse(pack.stdout) as { filename: string; size: number; unpackedSize: number; files: PackedFile[] }[];
    if (!packed) throw new Error(`npm pack printed no package: ${pack.stdout}`);
    const tarball = join(work, packed.filename);

    const dir = join(work, 'my-flows');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ name: 'my-flows', version: '0.1.0', private: true, type: 'module' }, null, 2)}\n`);
    const env = userEnv(await localPrebuild(work));
    const started = performance.now();
    const install = await exec('npm', ['install', tarball, '--prefer-offline'], { cwd: dir, env });
    const installMs = performance.now() - started;
    if (install.code !== 0) throw new Error(`npm install ${packed.filename} failed:\n${install.stderr}`);
    return {
      dir,
      work,
      tarball,
      packedBytes: packed.size,
      unpackedBytes: packed.unpackedSize,
      files: packed.files,
      installMs,
      bin: join(dir, 'node_modules', '.bin', 'flowmend'),
      cleanup,
    };
  } catch (error) {
    cleanup();
    throw error;
  }
}

/**
 * The optional peers a CDK app that imports `flowmend/cdk` has beside it, linked from the repository's own install
 * at the versions flowmend is built with: the same packages `npm install` would unpack (aws-cdk-lib alone is
 * 161 MB), without a second install in CI.
 */
export const linkCdkPeers = (dir: string): void => {
  for (const name of CDK_PEERS) symlinkSync(join(REPO, 'node_modules', name), join(dir, 'node_modules', name), 'dir');
};
