import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunContext, RunnerResult } from '../../functions/core/node-type.ts';
import { CommandHelper, findCommandHelperFile } from '../../functions/hosts/local/command-helper.ts';
import type { SpawnCommand } from '../../functions/nodes/command-spawn.ts';
import { makeShellRunner, shellRunner } from '../../functions/nodes/shell.ts';
import { ShellParamsSchema } from '../../functions/nodes/shell-spec.ts';
import { processGone } from '../support/process-state.ts';

const context: RunContext = { runId: 'run-1', nodeId: 'sh', seq: 1, cacheKey: 'k' };
// Every case runs twice: commands started from this process (the CLI's way), and from serve's command helper,
// a process of its own (hosts/local/command-helper.ts), which must make no difference to what a node records.
const helperFile = findCommandHelperFile();
const helper = new CommandHelper(helperFile);
afterAll(() => helper.close());
const spawnModes: [string, SpawnCommand | undefined][] = [
  ['from this process', undefined],
  ['from the command helper', helper.spawn],
];
let spawnCommand: SpawnCommand | undefined;
const runnerWith = (options: { maxOutputBytes?: number } = {}) => makeShellRunner({ ...options, ...(spawnCommand ? { spawnCommand } : {}) });
const run = (params: Record<string, unknown>, ctx: RunContext = context): Promise<RunnerResult> => runnerWith().run(ShellParamsSchema.parse(params), ctx);
const outputsOf = (result: RunnerResult): Record<string, unknown> => result.outputs ?? {};

/** Alive and not a zombie (an orphan reparented to a pid 1 that does not reap stays a zombie). */
const isAlive = (pid: number): boolean => {
  const path = `/proc/${pid}/stat`;
  if (!existsSync(path)) return false;
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
};

let dir: string;
beforeAll(async () => {
  dir = await realpath(await mkdtemp(join(tmpdir(), 'flowmend-shell-')));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each(spawnModes)('shellRunner, commands started %s', (_mode, spawn) => {
  beforeAll(() => {
    expect(helperFile, 'dist/command-helper.cjs is missing: run `npm run build` (npm test does)').toBeDefined();
    spawnCommand = spawn;
  });
  it('returns stdout without one trailing newline, stderr and exit code 0 as default', async () => {
    const result = await run({ command: "printf 'a\\n\\n'; echo oops >&2" });
    expect(result).toMatchObject({ kind: 'ok', action: 'default', outputs: { stdout: 'a\n', stderr: 'oops', exit_code: 0 } });
  });

  it('keeps trailing newlines when strip_newline is false', async () => {
    const result = await run({ command: 'echo hi', strip_newline: false });
    expect(outputsOf(result).stdout).toBe('hi\n');
  });

  it('reports a non-zero exit as a repairable EXIT_NONZERO with the first 500 chars of stderr', async () => {
    const result = await run({ command: "echo partial; head -c 2000 /dev/zero | tr '\\0' e >&2; exit 3" });
    expect(result.kind).toBe('failed');
    if (result.kind !== 'failed') return;
    expect(result.error.code).toBe('EXIT_NONZERO');
    expect(result.error.message).toBe(`Command failed with exit code 3: ${'e'.repeat(500)}`);
    expect(result.error.details).toMatchObject({ exit_code: 3, stdout: 'partial', command: expect.stringContaining('exit 3') });
    expect(result.outputs).toMatchObject({ stdout: 'partial', exit_code: 3 });
  });

  it('routes a non-zero exit to default when ignore_errors is set', async () => {
    const result = await run({ command: 'echo out; exit 4', ignore_errors: true });
    expect(result).toMatchObject({ kind: 'ok', action: 'default', outputs: { stdout: 'out', exit_code: 4 } });
  });

  it('reports a command killed by a signal with exit code 128+n', async () => {
    const result = await run({ command: 'kill -TERM $$' });
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'EXIT_NONZERO' }, outputs: { exit_code: 143 } });
    if (result.kind === 'failed') expect(result.error.message).toContain('SIGTERM');
  });

  it.each([
    ['a string as-is', 'line1\nline2', 'line1\nline2'],
    ['an object as JSON', { a: [1, 'x'] }, '{"a":[1,"x"]}'],
    ['an array as JSON', [1, { b: null }], '[1,{"b":null}]'],
    ['a number stringified', 42.5, '42.5'],
    ['a boolean stringified', false, 'false'],
  ])('passes stdin: %s', async (_name, stdin, expected) => {
    const result = await run({ command: 'cat', stdin });
    expect(outputsOf(result).stdout).toBe(expected);
  });

  it('closes stdin when none is given, so a reader does not wait', async () => {
    const result = await run({ command: 'cat; echo done' });
    expect(outputsOf(result).stdout).toBe('done');
  });

  it('does not fail when the command ignores a large stdin', async () => {
    const result = await run({ command: 'echo ignored', stdin: 'x'.repeat(1_000_000) });
    expect(result).toMatchObject({ kind: 'ok', outputs: { stdout: 'ignored' } });
  });

  it('merges env over the process environment, stringifying values', async () => {
    const result = await run({ command: 'echo "$A $B $C"; command -v sh >/dev/null && echo has-path', env: { A: 'x y', B: 7, C: true } });
    expect(outputsOf(result).stdout).toBe('x y 7 true\nhas-path');
  });

  it('runs in cwd', async () => {
    await writeFile(join(dir, 'marker.txt'), 'here');
    const result = await run({ command: 'pwd; cat marker.txt', cwd: dir });
    expect(outputsOf(result).stdout).toBe(`${dir}\nhere`);
  });

  it('fails with SPAWN_FAILED naming a missing cwd', async () => {
    const result = await run({ command: 'pwd', cwd: join(dir, 'nope') });
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'SPAWN_FAILED' } });
    if (result.kind === 'failed') expect(result.error.message).toContain('does not exist');
  });

  it('fails with SPAWN_FAILED when cwd is a file', async () => {
    await writeFile(join(dir, 'file.txt'), '');
    const result = await run({ command: 'pwd', cwd: join(dir, 'file.txt') });
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'SPAWN_FAILED' } });
    if (result.kind === 'failed') expect(result.error.message).toContain('not a directory');
  });

  it('kills the command and its children on timeout', async () => {
    const pidFile = join(dir, 'timeout.pids');
    const result = await run({ command: `sleep 30 & echo $! > ${pidFile}; echo $$ >> ${pidFile}; echo started; sleep 30`, timeout_s: 0.5 });
    expect(result).toMatchObject({
      kind: 'failed',
      error: { code: 'TIMEOUT', message: 'Command timed out after 0.5 s' },
      outputs: { stdout: 'started', exit_code: -1 },
    });
    const pids = (await readFile(pidFile, 'utf8')).trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    await expect.poll(() => pids.filter(isAlive)).toEqual([]);
  });

  it('accepts pflow\'s "timeout" as the timeout in seconds', async () => {
    const result = await run({ command: 'sleep 30', timeout: 0.3 });
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'TIMEOUT' } });
  });

  it('kills the process group when the context signal aborts', async () => {
    const controller = new AbortController();
    const pending = run({ command: 'echo go; sleep 30' }, { ...context, signal: controller.signal });
    setTimeout(() => controller.abort(), 200);
    expect(await pending).toMatchObject({ kind: 'failed', error: { code: 'ABORTED' } });
  });

  it('does not start a command when the signal is already aborted', async () => {
    const marker = join(dir, 'not-started');
    const result = await run({ command: `touch ${marker}` }, { ...context, signal: AbortSignal.abort() });
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'ABORTED' } });
    expect(existsSync(marker)).toBe(false);
  });

  it('returns once the shell exits even if a background job holds its stdout, and ends that job with the node', async () => {
    const pidFile = join(dir, 'bg.pid');
    const result = await run({ command: `echo x; (sleep 30 & echo $! > ${pidFile}); nohup sleep 30 >/dev/null 2>&1 & echo $! >> ${pidFile}` });
    expect(result).toMatchObject({ kind: 'ok', outputs: { stdout: 'x', exit_code: 0 } });
    const pids = (await readFile(pidFile, 'utf8')).trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await processGone(pid), `background job ${pid}`).toBe(true);
  });

  it('ends what left its process group (setsid, a daemon that forked twice) with the node, by the mark in its environment', async () => {
    const pidFile = join(dir, 'escaped.pid');
    const daemon = `(setsid sh -c 'sleep 30 & echo $! >> ${pidFile}' &)`;
    const result = await run({ command: `setsid sleep 30 & echo $! > ${pidFile}; ${daemon}; sleep 0.2; echo x` });
    expect(result).toMatchObject({ kind: 'ok', outputs: { stdout: 'x' } });
    const pids = (await readFile(pidFile, 'utf8')).trim().split('\n').map(Number);
    expect(pids).toHaveLength(2);
    for (const pid of pids) expect(await processGone(pid), `escaped process ${pid}`).toBe(true);
  });

  it("runs the items of one batch node side by side: an item's start does not end another item's command", async () => {
    const batchRun = { ...context, runId: 'run-items', nodeId: 'each' };
    const first = run({ command: 'sleep 0.8; echo first' }, { ...batchRun, item: 0 });
    // The first item's command runs (its group is recorded) when the second starts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await run({ command: 'echo second' }, { ...batchRun, item: 1 });
    expect(second).toMatchObject({ kind: 'ok', outputs: { stdout: 'second' } });
    expect(await first).toMatchObject({ kind: 'ok', outputs: { stdout: 'first', exit_code: 0 } });
  });

  it('truncates output past the cap and says so in a warning, not in the output the next node reads', async () => {
    const runner = runnerWith({ maxOutputBytes: 1000 });
    const result = await runner.run(ShellParamsSchema.parse({ command: "head -c 5000 /dev/zero | tr '\\0' a; echo tail >&2" }), context);
    expect(outputsOf(result).stdout).toBe('a'.repeat(1000));
    expect(outputsOf(result).stderr).toBe('tail');
    expect(result).toMatchObject({
      warnings: [{ code: 'OUTPUT_TRUNCATED', message: 'stdout was cut to its first 1000 of 5000 bytes (FLOWMEND_MAX_OUTPUT_BYTES)' }],
    });
  });

  it('caps captured stdout at 10 MiB by default', async () => {
    const result = await run({ command: "head -c 11000000 /dev/zero | tr '\\0' b" });
    const stdout = String(outputsOf(result).stdout);
    expect(stdout).toBe('b'.repeat(10 * 1024 * 1024));
    expect(result).toMatchObject({ warnings: [{ code: 'OUTPUT_TRUNCATED', details: { kept_bytes: 10 * 1024 * 1024, total_bytes: 11_000_000 } }] });
  });

  it('keeps unicode intact across chunk boundaries', async () => {
    const text = 'héllo wörld ✓ 日本語 🚀'.repeat(20_000);
    const result = await run({ command: 'cat', stdin: text });
    expect(outputsOf(result).stdout).toBe(text);
    const echoed = await run({ command: "printf '%s' 'ünïcødé ✓'" });
    expect(outputsOf(echoed).stdout).toBe('ünïcødé ✓');
  });
});

describe('shell node type spec', () => {
  it('declares side effects, outputs and the timeout from params', () => {
    expect(shellRunner.type).toBe('shell');
    expect(shellRunner.sideEffects({ command: 'ls' })).toBe(true);
    expect(shellRunner.outputKeys).toEqual(['stdout', 'stderr', 'exit_code']);
    expect(shellRunner.timeoutS({ command: 'ls' })).toBe(60);
    expect(shellRunner.timeoutS({ command: 'ls', timeout_s: 5 })).toBe(5);
    expect(shellRunner.timeoutS({ command: 'ls', timeout: 7 })).toBe(7);
  });

  it('rejects unknown params, a missing command and bad env values', () => {
    const issues = ShellParamsSchema.safeParse({ comand: 'ls', env: { A: { nested: 1 } }, timeout_s: -1 }).error?.issues ?? [];
    const text = issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('\n');
    expect(text).toContain('command: command is required');
    expect(text).toContain('env.A: env values must be strings, numbers or booleans');
    expect(text).toContain('timeout_s: timeout_s must be greater than 0');
    expect(issues.some((i) => i.code === 'unrecognized_keys')).toBe(true);
  });
});
