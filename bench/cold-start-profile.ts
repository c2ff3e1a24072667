// Where a Lambda's import time goes: bundles the handlers named on the command line (default advance,
// run-shell, start-once) as bench/cold-start.ts does, imports each once under `node --cpu-prof` and
// splits the profile into compile (V8 parsing the bundle), module init (the bundle's top-level code,
// attributed to the package or source file it came from) and GC. Module init is attributed on a
// second, unminified build, whose `// path` comments name each module. The profiler inflates every
// figure; compare the shares, not the ms, with bench/cold-start.ts. Prints; no assertions.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleLambda } from './lambda-bundle.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const lambdaDir = fileURLToPath(new URL('../functions/hosts/lambda/', import.meta.url));
const names = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['advance', 'run-shell', 'start-once'];
const PROBE = 'await import(process.argv[1]);';

const bundle = (name: string, outfile: string, minify: boolean): Promise<void> => bundleLambda(join(lambdaDir, `${name}.ts`), outfile, { minify });

/** One import of `file` under the sampling profiler. */
const profile = (file: string, dir: string): Profile => {
  execFileSync(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=100', '--input-type=module', '-e', PROBE, pathToFileURL(file).href],
    {
      env: { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1' },
    },
  );
  const [first] = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  return JSON.parse(readFileSync(join(dir, first ?? ''), 'utf8')) as Profile;
};

const selfTimes = (p: Profile): Map<number, number> => {
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  return self;
};

const ms = (us: number): string => (us / 1000).toFixed(1).padStart(7);

/** The module each line of an unminified bundle belongs to: a package name, or a source file. */
const moduleOfLine = (file: string): string[] => {
  let current = '(runtime)';
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => {
      const path = /^\/\/ ((?:node_modules|functions)\/\S+)$/.exec(line)?.[1];
      if (path) current = path.startsWith('functions/') ? path : (/^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path)?.[1] ?? path);
      return current;
    });
};

const out = mkdtempSync(join(tmpdir(), 'flowmend-prof-'));
try {
  for (const name of names) {
    const minified = join(out, name, 'min', 'index.mjs');
    const plain = join(out, name, 'plain', 'index.mjs');
    await Promise.all([bundle(name, minified, true), bundle(name, plain, false)]);
    const p = profile(minified, join(out, name, 'prof-min'));
    const self = selfTimes(p);
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const inclusive = (n: ProfileNode): number => (self.get(n.id) ?? 0) + (n.children ?? []).reduce((sum, c) => sum + inclusive(byId.get(c) as ProfileNode), 0);
    let compile = 0;
    let init = 0;
    let gc = 0;
    for (const n of p.nodes) {
      if (n.callFrame.functionName === 'compileSourceTextModule') compile += inclusive(n);
      if (n.callFrame.url.endsWith('/min/index.mjs')) init += self.get(n.id) ?? 0;
      if (n.callFrame.functionName === '(garbage collector)') gc += self.get(n.id) ?? 0;
    }
    console.log(`${name}: compile ${ms(compile)} ms, module init ${ms(init)} ms, gc ${ms(gc)} ms (minified, under the profiler)`);
    // Module init by origin, from the unminified build.
    const q = profile(plain, join(out, name, 'prof-plain'));
    const qSelf = selfTimes(q);
    const lines = moduleOfLine(plain);
    const byModule = new Map<string, number>();
    for (const n of q.nodes) {
      if (!n.callFrame.url.endsWith('/plain/index.mjs')) continue;
      const origin = lines[n.callFrame.lineNumber] ?? '(runtime)';
      byModule.set(origin, (byModule.get(origin) ?? 0) + (qSelf.get(n.id) ?? 0));
    }
    for (const [origin, us] of [...byModule].sort((a, b) => b[1] - a[1]).slice(0, 6)) console.log(`  ${ms(us)} ms  ${origin}`);
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}
