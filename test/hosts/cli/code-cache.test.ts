// The CLI bundle's start from a V8 code cache (bin/cli-bundle.cjs): the build's caches are accepted by the
// Node that built them, and a cache V8 rejects or a missing one costs a compile, never the command. Each
// case runs in its own process: V8 keeps compiled scripts per isolate, which would hide a rejected cache.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, REPO } from '../../support/cli-process.ts';

const BUNDLE = join(REPO, 'dist', 'flowmend.cjs');
const hello = join(REPO, 'examples', 'hello.json');
const dir = makeTempDir('code-cache');

/** Loads the bundle with `cacheFile` in a fresh process, runs `validate examples/hello.json`, and reports. */
const startWith = (cacheFile: string) => {
  const script = `
    const { loadCliBundle } = require(${JSON.stringify(join(REPO, 'bin', 'cli-bundle.cjs'))});
    const { main, cache } = loadCliBundle(${JSON.stringify(BUNDLE)}, ${JSON.stringify(cacheFile)});
    main(['validate', ${JSON.stringify(hello)}]).then((code) => console.log(JSON.stringify({ cache, code })));`;
  const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  const last = child.stdout.trim().split('\n').at(-1) ?? '';
  return { ...(JSON.parse(last) as { cache: string; code: number }), stdout: child.stdout, stderr: child.stderr };
};

/** The cache the bin picks for a command line, on this Node. */
const cacheFor = (argv: string[]): string => {
  const script = `
    const { cacheDirFor, cacheNameFor } = require(${JSON.stringify(join(REPO, 'bin', 'cli-bundle.cjs'))});
    console.log(cacheDirFor(${JSON.stringify(BUNDLE)}) + '/' + cacheNameFor(${JSON.stringify(argv)}) + '.bin');`;
  return spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' }).stdout.trim();
};

describe('the CLI bundle started from a V8 code cache', () => {
  it('is built with a cache per common command that this Node accepts', () => {
    expect(existsSync(BUNDLE), 'dist/flowmend.cjs is missing: run `npm run build` (npm test does)').toBe(true);
    for (const command of ['validate', 'run', 'resume', 'status', 'logs', 'runs', 'all']) {
      expect(existsSync(cacheFor([command === 'all' ? 'cancel' : command])), command).toBe(true);
    }
    expect(cacheFor(['examples/hello.json'])).toMatch(/\/run\.bin$/);
    const started = startWith(cacheFor(['validate']));
    expect(started).toMatchObject({ cache: 'accepted', code: 0 });
    expect(started.stdout).toContain('is valid');
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
});
