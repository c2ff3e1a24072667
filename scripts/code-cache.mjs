// The V8 code caches of the CLI bundle (see bin/cli-bundle.cjs), made at build time: the commands a person
// types most each get a cache made after running that command once on a scratch state dir, and `all` holds
// everything those commands compiled, for the other commands (`serve` the same, made under its Node flags). Run on
// the Node that built; another Node looks for its own V8's folder, finds none and compiles (as it would without
// caches).
//
// The same scratch runs leave the validated default definition in the state dir's memo, which the build
// ships as dist/validated-definitions (functions/hosts/local/definition-memo.ts).
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { CACHED_COMMANDS, SERVE_NODE_FLAGS, bundleNameFor, cacheDirFor } = createRequire(import.meta.url)('../bin/cli-bundle.cjs');

/** A child's env without the person's FLOWMEND_ settings or LLM key: the scratch runs are the build's own. */
const buildEnv = () => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('FLOWMEND_') && !name.startsWith('ANTHROPIC_')));

/** Runs the bundle once, outside any cache; returns its JSON report. */
const runBundle = (root, args) => {
  const result = spawnSync(process.execPath, [`${root}bin/flowmend.cjs`, ...args, '--output-format', 'json'], { env: buildEnv(), encoding: 'utf8' });
  try {
    return JSON.parse(result.stdout);
  } catch {
    throw new Error(`flowmend ${args.join(' ')} exited ${result.status}: ${(result.stderr || result.stdout).slice(0, 500)}`);
  }
};

/**
 * Writes dist/code-cache/<v8>-<arch>/<bundle mtime>/<command>.bin for each of CACHED_COMMANDS, all.bin and
 * serve.bin (under SERVE_NODE_FLAGS), the same for `validate` from its own bundle, and dist/validated-definitions.
 * Throws with the failing command's output; the build then warns and ships no caches (a start compiles, nothing
 * else changes).
 */
export const writeCodeCaches = (root) => {
  const bundle = `${root}dist/flowmend.cjs`;
  rmSync(join(root, 'dist', 'code-cache'), { recursive: true, force: true });
  const scratch = mkdtempSync(join(tmpdir(), 'flowmend-build-'));
  try {
    const state = join(scratch, 'state');
    const hello = join(scratch, 'hello.json');
    cpSync(`${root}examples/hello.json`, hello);
    // A run that fails at its last node until `gate` exists, for `resume` (one each for resume.bin, all.bin and serve.bin).
    const gate = join(scratch, 'gate');
    const failing = join(scratch, 'fail-last.json');
    writeFileSync(
      failing,
      JSON.stringify({
        nodes: [
          { id: 'first', type: 'transform', params: { expression: '$ + 1', input: 1 } },
          { id: 'last', type: 'shell', params: { command: `test -f '${gate}'` } },
        ],
        edges: [{ from: 'first', to: 'last' }],
      }),
    );
    const done = runBundle(root, ['run', hello, '--state-dir', state]).run_id;
    const [forResume, forAll, forServe] = [1, 2, 3].map(() => runBundle(root, ['run', failing, '--no-repair', '--state-dir', state]).run_id);
    writeFileSync(gate, '');
    const memo = join(state, 'validated-definitions');
    if (existsSync(memo)) cpSync(memo, `${root}dist/validated-definitions`, { recursive: true });

    const lines = (resumeId) => ({
      validate: [['validate', hello]],
      run: [['run', hello, '--state-dir', state]],
      resume: [['resume', resumeId, '--state-dir', state]],
      status: [['status', done, '--state-dir', state]],
      logs: [['logs', done, '--state-dir', state]],
      runs: [['runs', '--state-dir', state]],
    });
    const produce = (name, argvs, from = bundle, nodeFlags = []) => {
      const file = join(cacheDirFor(from, statSync(from).mtimeMs), `${name}.bin`);
      const result = spawnSync(process.execPath, [...nodeFlags, `${root}scripts/code-cache-producer.cjs`, from, file, JSON.stringify(argvs)], {
        env: buildEnv(),
        encoding: 'utf8',
      });
      if (result.status !== 0) throw new Error(`code cache ${name}: exit ${result.status}: ${(result.stderr || result.stdout).slice(0, 500)}`);
    };
    const first = lines(forResume);
    for (const name of CACHED_COMMANDS) produce(name, first[name]);
    produce('validate', first.validate, `${root}dist/${bundleNameFor(['validate'])}`);
    produce('all', Object.values(lines(forAll)).flat());
    // `serve` runs under flags of its own, and V8 rejects a cache made under others: the same commands, under its flags.
    produce('serve', Object.values(lines(forServe)).flat(), bundle, SERVE_NODE_FLAGS);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
};
