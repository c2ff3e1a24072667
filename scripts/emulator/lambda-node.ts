import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Node the emulated Lambdas run on: the major the stack deploys to (`nodejs24.x`), whatever runs the
 * tests, so that a bundle that only works on another Node fails here first. It comes from the npm
 * registry as an ordinary package (`node-<platform>-<arch>`, its integrity checked by npm against the
 * registry), once per machine, into node_modules/.cache.
 */
export const LAMBDA_NODE_VERSION = '24.21.0';

const ROOT = new URL('../../', import.meta.url).pathname;

export const lambdaNodeDir = (root = ROOT, version = LAMBDA_NODE_VERSION): string =>
  join(root, 'node_modules', '.cache', 'flowmend-emulator', `node-v${version}`);

/** Path of the Node binary, fetched and unpacked on first use; throws with what to do when it cannot be had. */
export function ensureLambdaNode(root = ROOT): string {
  return ensureNode(LAMBDA_NODE_VERSION, root);
}

/** Path of a Node binary of this exact version, from the npm registry once per machine (the package test's Node 22 too). */
export function ensureNode(version: string, root = ROOT): string {
  const dir = lambdaNodeDir(root, version);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  const pkg = `node-${process.platform}-${process.arch}@${version}`;
  mkdirSync(join(dir, '..'), { recursive: true });
  const work = mkdtempSync(join(dir, '..', 'fetch-'));
  try {
    const packed = execFileSync('npm', ['pack', pkg, '--pack-destination', work, '--silent'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
    const tarball = join(work, packed.split('\n').at(-1) ?? '');
    execFileSync('tar', ['-xzf', tarball, '-C', work, 'package/bin/node']);
    chmodSync(join(work, 'package', 'bin', 'node'), 0o755);
    const runs = execFileSync(join(work, 'package', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).trim();
    if (runs !== `v${version}`) throw new Error(`${pkg} runs as ${runs}`);
    mkdirSync(join(dir), { recursive: true });
    renameSync(join(work, 'package', 'bin'), join(dir, 'bin'));
    return binary;
  } catch (error) {
    const detail = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new Error(`could not install Node ${version} (npm pack ${pkg}): ${detail}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
