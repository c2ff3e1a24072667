// The CLI bundle's start from a V8 code cache (bin/cli-bundle.cjs): the build's caches are accepted by the
// Node that built them, and a cache V8 rejects or a missing one costs a compile, never the command. Each
// case runs in its own process: V8 keeps compiled scripts per isolate, which would hide a rejected cache.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, mkdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, REPO, writeWorkflow } from '../../support/cli-process.ts';
import { startFakeAnthropic } from '../../support/fake-anthropic.ts';

const BUNDLE = join(REPO, 'dist', 'flowmend.cjs');
const { SERVE_NODE_FLAGS } = createRequire(import.meta.url)('../../../bin/cli-bundle.cjs') as { SERVE_NODE_FLAGS: string[] };
const VALIDATE_BUNDLE = join(REPO, 'dist', 'flowmend-validate.cjs');
const hello = join(REPO, 'examples', 'hello.json');
const dir = makeTempDir('code-cache');

/** Loads `bundle` with `cacheFile` in a fresh process, runs `argv` (`validate examples/hello.json`), and reports. */
const startWith = (cacheFile: string, bundle = BUNDLE, argv = ['validate', hello], nodeArgs: string[] = []) => {
  const script = `
    const { loadCliBundle } = require(${JSON.stringify(join(REPO, 'bin', 'cli-bundle.cjs'))});
    const { main, cache } = loadCliBundle(${JSON.stringify(bundle)}, ${JSON.stringify(cacheFile)});
    main(${JSON.stringify(argv)}).then((code) => console.log(JSON.stringify({ cache, code })));`;
  const child = spawnSync(process.execPath, [...nodeArgs, '-e', script], { encoding: 'utf8' });
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  return { ...(JSON.parse(last) as { cache: string; code: number }), stdout: child.stdout, stderr: child.stderr };
};

/** The bundle and cache the bin picks for these command lines, on this Node (one process for all, under `nodeArgs`). */
const cachesFor = (argvs: string[][], nodeArgs: string[] = []): string[] => {
  const script = `
    const { bundleNameFor, cacheDirFor, cacheNameFor } = require(${JSON.stringify(join(REPO, 'bin', 'cli-bundle.cjs'))});
    for (const argv of ${JSON.stringify(argvs)}) {
      const bundle = ${JSON.stringify(join(REPO, 'dist'))} + '/' + bundleNameFor(argv);
      console.log(cacheDirFor(bundle, require('node:fs').statSync(bundle).mtimeMs) + '/' + cacheNameFor(argv) + '.bin');
    }`;
  return spawnSync(process.execPath, [...nodeArgs, '-e', script], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n');
};

describe('the CLI bundle started from a V8 code cache', () => {
  it('is built with a cache per common command that this Node accepts', () => {
    expect(existsSync(BUNDLE), 'dist/flowmend.cjs is missing: run `npm run build` (npm test does)').toBe(true);
    const caches = cachesFor([['validate'], ['run'], ['resume'], ['status'], ['logs'], ['runs'], ['cancel'], ['examples/hello.json']]);
    expect(caches.map((file) => file.split('/').at(-1))).toEqual([
      'validate.bin',
      'run.bin',
      'resume.bin',
      'status.bin',
      'logs.bin',
      'runs.bin',
      'all.bin',
      'run.bin',
    ]);
    for (const file of caches) expect(existsSync(file), file).toBe(true);
    const started = startWith(caches[0] as string, VALIDATE_BUNDLE);
    expect(started).toMatchObject({ cache: 'accepted', code: 0 });
    expect(started.stdout).toContain('is valid');
    expect(startWith(caches[3] as string, BUNDLE, ['status', 'no-such-run', '--state-dir', join(dir, 'state')])).toMatchObject({ cache: 'accepted', code: 2 });
  });

  it('starts `serve` from a cache made under its Node flags, which V8 accepts only under them', () => {
    const [serveCache] = cachesFor([['serve']], SERVE_NODE_FLAGS);
    expect(serveCache?.split('/').at(-1)).toBe('serve.bin');
    expect(existsSync(serveCache as string), serveCache).toBe(true);
    // Without the flags (`node bin/flowmend.cjs serve`), `all`'s cache, made under none.
    expect(
      cachesFor([['serve']])[0]
        ?.split('/')
        .at(-1),
    ).toBe('all.bin');
    const status = ['status', 'no-such-run', '--state-dir', join(dir, 'state')];
    expect(startWith(serveCache as string, BUNDLE, status, SERVE_NODE_FLAGS)).toMatchObject({ cache: 'accepted', code: 2 });
    expect(startWith(serveCache as string, BUNDLE, status)).toMatchObject({ cache: 'rejected', code: 2 });
  });

  it('runs `validate` from a bundle of its own, a third of the whole CLI, which says so if another command reaches it', () => {
    expect(statSync(VALIDATE_BUNDLE).size).toBeLessThan(statSync(BUNDLE).size / 2);
    // The bin never gives it another command; if a bug did, the command fails with one clear line.
    const other = startWith(join(dir, 'none.bin'), VALIDATE_BUNDLE, ['status', 'no-such-run', '--state-dir', join(dir, 'state')]);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('is not in the validate bundle');
    expect(other.stderr).not.toMatch(/\n\s+at /);
  });

  it('compiles from source when V8 rejects the cache (another Node, a damaged file), and the command runs', () => {
    const damaged = join(dir, 'damaged.bin');
    writeFileSync(damaged, Buffer.alloc(4096, 7));
    const started = startWith(damaged);
    expect(started).toMatchObject({ cache: 'rejected', code: 0 });
    expect(started.stdout).toContain('is valid');
    expect(started.stderr).toBe('');
  });

  it('compiles from source when there is no cache for this Node', () => {
    expect(startWith(join(dir, 'none.bin'))).toMatchObject({ cache: 'missing', code: 0 });
  });

  it('loads a package left out of the bundle when a command reaches it: the Anthropic SDK of an llm node', async () => {
    const fake = await startFakeAnthropic();
    try {
      fake.enqueue({ text: 'hello from the fake' });
      const workflow = writeWorkflow(dir, 'ask', { nodes: [{ id: 'ask', type: 'llm', params: { prompt: 'say hello' } }], edges: [] });
      const args = [join(REPO, 'bin', 'flowmend.cjs'), 'run', workflow, '--no-repair', '--output-format', 'json', '--state-dir', join(dir, 'state')];
      const env = { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.baseURL, FLOWMEND_STATE_DIR: '' };
      const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect(JSON.parse(stdout)).toMatchObject({ success: true, result: { response: 'hello from the fake' } });
      expect(code).toBe(0);
      expect(fake.calls).toHaveLength(1);
    } finally {
      await fake.close();
    }
  });

  it('runs the TypeScript through tsx when there is no bundle (a fresh edit, an install without the build)', () => {
    // A tree with the sources and no dist/: the bin must not need the bundle.
    const tree = join(dir, 'unbuilt');
    mkdirSync(tree);
    cpSync(join(REPO, 'bin'), join(tree, 'bin'), { recursive: true });
    for (const name of ['functions', 'node_modules', 'package.json']) symlinkSync(join(REPO, name), join(tree, name));
    const child = spawnSync(process.execPath, [join(tree, 'bin', 'flowmend.cjs'), 'validate', hello], { encoding: 'utf8' });
    expect(child.stdout).toContain('is valid');
    expect(child.status).toBe(0);
  });

  it('runs a bundle older than the sources from an installed package, and the sources in a working copy', () => {
    // The same tree twice, its bundle marked (it says so on stderr) and dated before every source.
    const treeAt = (tree: string): string => {
      mkdirSync(tree, { recursive: true });
      cpSync(join(REPO, 'bin'), join(tree, 'bin'), { recursive: true });
      cpSync(join(REPO, 'dist'), join(tree, 'dist'), { recursive: true });
      for (const name of ['functions', 'node_modules', 'package.json']) symlinkSync(join(REPO, name), join(tree, name));
      const bundle = join(tree, 'dist', 'flowmend-validate.cjs');
      appendFileSync(bundle, "\n;require('node:fs').writeSync(2, 'from the bundle\\n');\n");
      utimesSync(bundle, new Date(2000, 0, 1), new Date(2000, 0, 1));
      return join(tree, 'bin', 'flowmend.cjs');
    };
    const validateWith = (bin: string) => spawnSync(process.execPath, [bin, 'validate', hello], { encoding: 'utf8' });
    const installed = validateWith(treeAt(join(dir, 'project', 'node_modules', 'flowmend')));
    expect(installed.stdout).toContain('is valid');
    expect(installed.stderr).toBe('from the bundle\n');
    const workingCopy = validateWith(treeAt(join(dir, 'checkout', 'flowmend')));
    expect(workingCopy.stdout).toContain('is valid');
    expect(workingCopy.stderr).toBe('');
  });

  it('runs the same CLI through bin/flowmend.mjs, the name scripts knew first', () => {
    const child = spawnSync(process.execPath, [join(REPO, 'bin', 'flowmend.mjs'), 'validate', hello], { encoding: 'utf8' });
    expect(child.stdout).toContain('is valid');
    expect(child.status).toBe(0);
  });
});
