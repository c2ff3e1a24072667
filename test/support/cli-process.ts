// Runs the real `flowmend` bin (node bin/flowmend.cjs) as a child process, for tests where the process boundary matters.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkflowInput } from '../../functions/core/ir.ts';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(REPO, 'bin', 'flowmend.cjs');
const DRIVER = fileURLToPath(new URL('./crash-driver.ts', import.meta.url));

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  pid: number;
  /** Settles when the process has exited, with everything it printed. */
  done: Promise<CliResult>;
  /** What it has printed so far (for a test's message when it does not exit). */
  output: () => { stdout: string; stderr: string };
}

/** The env of a child CLI: no real LLM, no state dir of the person running the tests. */
const childEnv = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  // Tests never reach a real LLM, nor another state dir, nor a telemetry collector of the person running them.
  for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL', 'FLOWMEND_STATE_DIR', 'TRACEPARENT']) delete env[name];
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name];
  return { ...env, ...extra };
};

const live = new Set<ChildProcess>();

/** SIGKILLs every child this module started that still runs (a test that failed half-way), so none lingers. */
export const killStrayChildren = (): void => {
  for (const child of live) child.kill('SIGKILL');
};

const track = (child: ChildProcess): CliProcess => {
  live.add(child);
  child.on('exit', () => live.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  if (child.pid === undefined) throw new Error('the child process did not start');
  return { child, pid: child.pid, done, output: () => ({ stdout, stderr }) };
};

/**
 * `promise`, or a failure naming `what` after `timeoutMs` with `detail()` (what a hung process printed): a
 * test that waits on several processes then says which one did not answer, where the test's own timeout would not.
 */
export const within = async <T>(promise: Promise<T>, what: string, timeoutMs: number, detail: () => string = () => ''): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${timeoutMs} ms\n${detail()}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
};

/** Starts `flowmend <args> --state-dir <stateDir>` and returns at once; `env` adds to (or overrides) the child's environment. */
export const spawnCli = (args: readonly string[], options: { stateDir: string; env?: NodeJS.ProcessEnv }): CliProcess =>
  track(spawn(process.execPath, [BIN, ...args, '--state-dir', options.stateDir], { cwd: REPO, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'] }));

/** Runs `flowmend <args> --state-dir <stateDir>` to its end. */
export const runCli = (args: readonly string[], options: { stateDir: string; env?: NodeJS.ProcessEnv }): Promise<CliResult> => spawnCli(args, options).done;

/** Parses the one JSON object `--output-format json` prints, saying what was printed when it is not JSON. */
export const parseJsonOutput = <T = Record<string, unknown>>(result: CliResult): T => {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(`expected one JSON object on stdout (exit ${result.code})\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
};

/**
 * Starts a run in a child process that SIGKILLs itself right after a chosen store write (see crash-driver.ts),
 * so a test can crash a run at an exact point between two writes.
 */
export const spawnCrashDriver = (spec: {
  stateDir: string;
  workflowPath: string;
  runId: string;
  crashAt: string;
  workspace?: string;
  markerDir?: string;
}): CliProcess =>
  track(
    spawn(
      process.execPath,
      ['--import', 'tsx', DRIVER, spec.stateDir, spec.workflowPath, spec.runId, spec.crashAt, ...(spec.workspace ? [spec.workspace] : [])],
      {
        cwd: REPO,
        env: { ...childEnv(), ...(spec.markerDir ? { CRASH_MARKER_DIR: spec.markerDir } : {}) },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    ),
  );

export const makeTempDir = (prefix: string): string => mkdtempSync(join(tmpdir(), `flowmend-${prefix}-`));

export const writeWorkflow = (dir: string, name: string, workflow: WorkflowInput): string => {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(workflow, null, 2));
  return path;
};

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` answers true, asking every 25 ms; fails with `what` after `timeoutMs` (a hung child, not a slow one). */
export const until = async (what: string, done: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(25);
  }
};

/** Waits until a file exists; fails with `what` after `timeoutMs` (a hung child, not a slow one). */
export const waitForFile = (path: string, what: string, timeoutMs = 30_000): Promise<void> => until(`${what} (${path})`, () => existsSync(path), timeoutMs);

/** Lines appended to a side-effect counter file (0 when it does not exist). */
export const countLines = (path: string): number => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0);

/** SIGKILLs the process group a shell node's command leads (its `$$`, written to `pidFile`), if it still runs. */
export const killShellGroup = (pidFile: string): void => {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').trim());
  if (!Number.isInteger(pid) || pid <= 0) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
};

/** A shell command that counts its run, records its pid, marks that it started, and waits for the test's go file. */
export const blockingCommand = (dir: string, name: string, options: { countFirst: boolean }): string => {
  const count = `echo x >> ${dir}/${name}.count`;
  const wait = `echo $$ > ${dir}/${name}.pid; touch ${dir}/${name}.started; while [ ! -f ${dir}/go ]; do sleep 0.05; done`;
  return options.countFirst ? `${count}; ${wait}; echo ${name}-done` : `${wait}; ${count}; echo ${name}-done`;
};
