import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { constants as osConstants } from 'node:os';
import { resolve } from 'node:path';
import type { NodeRunner, RunContext, RunnerResult } from '../core/index.ts';
import { CappedBuffer } from './capped-buffer.ts';
import { commandEnvironment } from './command-env.ts';
import { type CommandEvents, type SpawnCommand, type StartedCommand, spawnDirect } from './command-spawn.ts';
import { scrubEngineEnvironment } from './engine-environ.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { DEFAULT_GROUP_DIR, endLeftoverGroup, endMarked, forgetGroup, groupRecordPath, NODE_MARK_VARIABLE, recordGroup } from './process-groups.ts';
import { type ShellParams, ShellParamsSchema, shellSpec, timeoutOf } from './shell-spec.ts';

const MAX_OUTPUT_BYTES = 10 * 1024 * 1024;
const MESSAGE_STDERR_CHARS = 500;
const DETAILS_STDOUT_CHARS = 4000;
/** How long pipes may stay open after the shell exits (held by a background job) before we stop reading. */
const PIPE_GRACE_MS = 1000;
/** setTimeout fires at once for delays past 2^31-1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ShellRunnerOptions {
  /** Bytes kept of stdout and of stderr, each (default 10 MiB). */
  readonly maxOutputBytes?: number;
  /** Names of the engine's environment variables a command sees (default: `commandEnvAllowList`). */
  readonly envAllowList?: readonly string[];
  /** Where the process group of each running command is recorded (default: DEFAULT_GROUP_DIR). */
  readonly groupDir?: string;
  /** How commands are started (default: from this process, `spawnDirect`; `serve` gives its helper's). */
  readonly spawnCommand?: SpawnCommand;
}

/** What goes to the child's stdin: strings as-is, objects as JSON, scalars stringified. */
export const stdinText = (stdin: unknown): string | undefined => {
  if (stdin === undefined || stdin === null) return undefined;
  if (typeof stdin === 'string') return stdin;
  if (typeof stdin === 'object') return JSON.stringify(stdin);
  return String(stdin);
};

/** An output cut at its limit, said as a warning on the node (the output itself stays what the command wrote, cut). */
const truncationWarnings = (streams: Record<'stdout' | 'stderr', CappedBuffer>) =>
  (['stdout', 'stderr'] as const).flatMap((name) => {
    const buffer = streams[name];
    if (!buffer.truncated) return [];
    return [
      {
        code: 'OUTPUT_TRUNCATED',
        message: `${name} was cut to its first ${buffer.keptBytes} of ${buffer.totalBytes} bytes (FLOWMEND_MAX_OUTPUT_BYTES)`,
        details: { stream: name, kept_bytes: buffer.keptBytes, total_bytes: buffer.totalBytes },
      },
    ];
  });

const stripOneNewline = (text: string): string => (text.endsWith('\n') ? text.slice(0, -1) : text);

const exitCodeOf = (code: number | null, signal: NodeJS.Signals | null): number => {
  if (code !== null) return code;
  const number = signal === null ? undefined : osConstants.signals[signal];
  return 128 + (number ?? 0);
};

const killGroup = (pid: number | undefined): void => {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is already gone.
  }
};

/** The run's workspace (the local host records it), or `cwd` resolved against it; without either, this process's cwd. */
const workingDirectory = (params: ShellParams): string | undefined =>
  params.cwd === undefined ? params.__workspace : params.__workspace === undefined ? params.cwd : resolve(params.__workspace, params.cwd);

const spawnFailureMessage = async (params: ShellParams, error: NodeJS.ErrnoException): Promise<string> => {
  const cwd = workingDirectory(params);
  if (cwd !== undefined) {
    const info = await stat(cwd).catch(() => undefined);
    if (info === undefined) return `Cannot start command: cwd "${cwd}" does not exist`;
    if (!info.isDirectory()) return `Cannot start command: cwd "${cwd}" is not a directory`;
  }
  return `Cannot start command: ${error.message}`;
};

const spawnFailure = async (params: ShellParams, error: NodeJS.ErrnoException, durationMs: number): Promise<RunnerResult> => ({
  kind: 'failed',
  error: {
    code: 'SPAWN_FAILED',
    message: await spawnFailureMessage(params, error),
    details: { command: params.command, cwd: params.cwd, errno: error.code },
  },
  durationMs,
});

interface Finish {
  readonly how: 'exit' | 'timeout' | 'aborted' | 'spawn-error' | 'lost';
  readonly message?: string;
  readonly code?: number | null;
  readonly signal?: NodeJS.Signals | null;
  readonly error?: NodeJS.ErrnoException;
}

export const makeShellRunner = (options: ShellRunnerOptions = {}): NodeRunner<typeof ShellParamsSchema> => {
  const maxBytes = options.maxOutputBytes ?? MAX_OUTPUT_BYTES;

  const run = async (params: ShellParams, context: RunContext): Promise<RunnerResult> => {
    const timeoutS = timeoutOf(params);
    const started = monotonicMs();
    const elapsed = (): number => monotonicMs() - started;
    if (context.signal?.aborted) {
      return { kind: 'failed', error: { code: 'ABORTED', message: 'Command not started: the run was cancelled' }, durationMs: 0 };
    }

    // The engine's credentials leave the block a command could read as /proc/$PPID/environ (once per process).
    scrubEngineEnvironment();
    // Everything the command starts inherits this mark, and is ended by it with the node (unless it clears its environment).
    const mark = randomBytes(12).toString('hex');
    const env = { ...commandEnvironment(process.env, params.env ?? {}, options.envAllowList), [NODE_MARK_VARIABLE]: mark };
    const stdout = new CappedBuffer(maxBytes);
    const stderr = new CappedBuffer(maxBytes);

    // A copy of this node's command that outlived a killed host would run beside the new one: end it first.
    const groupFile = groupRecordPath(options.groupDir ?? DEFAULT_GROUP_DIR, context.runId, context.nodeId, context.item);
    await endLeftoverGroup(groupFile);

    let pid: number | undefined;
    let command: StartedCommand | undefined;
    let stopped: Finish['how'] | undefined;
    let exited: Finish | undefined;
    let open = 2;
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    let grace: NodeJS.Timeout | undefined;
    let resolveFinish: (finish: Finish) => void = () => {};
    const finishing = new Promise<Finish>((resolve) => {
      resolveFinish = resolve;
    });
    const done = (result: Finish): void => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      clearTimeout(grace);
      context.signal?.removeEventListener('abort', onAbort);
      command?.release();
      resolveFinish(result);
    };
    const settle = (): void => {
      if (exited !== undefined) done(stopped === undefined ? exited : { ...exited, how: stopped });
    };
    const settleIfDrained = (): void => {
      if (open === 0) settle();
    };
    // Before the command has a pid (a helper still starting it), the kill waits for it (below).
    const stop = (how: Finish['how']): void => {
      stopped ??= how;
      killGroup(pid);
      settle();
    };
    const onAbort = (): void => stop('aborted');
    context.signal?.addEventListener('abort', onAbort, { once: true });
    const events: CommandEvents = {
      output: (stream, chunk) => (stream === 'stdout' ? stdout : stderr).push(chunk),
      closed: () => {
        open -= 1;
        settleIfDrained();
      },
      error: (error) => {
        killGroup(pid);
        done({ how: 'spawn-error', error });
      },
      exit: (code, signal) => {
        exited = { how: 'exit', code, signal };
        settleIfDrained();
        if (open > 0 && !finished) grace = setTimeout(settle, PIPE_GRACE_MS);
      },
      lost: (message) => {
        killGroup(pid);
        done({ how: 'lost', message });
      },
    };

    try {
      command = await (options.spawnCommand ?? spawnDirect)(
        { command: params.command, cwd: workingDirectory(params), env, stdin: stdinText(params.stdin) },
        events,
      );
    } catch (error) {
      context.signal?.removeEventListener('abort', onAbort);
      return spawnFailure(params, error as NodeJS.ErrnoException, elapsed());
    }
    pid = command.pid;
    if (finished) command.release();
    if (pid !== undefined) {
      // Stopped (a cancel, a timeout) while it was being started: its group is ended now that it has one.
      if (stopped !== undefined) killGroup(pid);
      try {
        recordGroup(groupFile, pid, mark);
      } catch {
        // An unwritable record dir costs only the orphan cleanup, not the node.
      }
    }
    if (!finished) timer = setTimeout(() => stop('timeout'), Math.min(timeoutS * 1000, MAX_TIMER_MS));
    const finish = await finishing;

    // The command is over, and so is what it started: in its process group (background jobs, `nohup`), and
    // what left the group (`setsid`, daemons) by the mark in its environment.
    killGroup(pid);
    endMarked(mark, pid ?? 0);
    forgetGroup(groupFile);

    const strip = (text: string): string => (params.strip_newline ? stripOneNewline(text) : text);
    const out = strip(stdout.text());
    const err = strip(stderr.text());
    const durationMs = elapsed();

    switch (finish.how) {
      case 'spawn-error':
        return spawnFailure(params, finish.error as NodeJS.ErrnoException, durationMs);
      case 'lost':
        return {
          kind: 'failed',
          error: { code: 'COMMAND_LOST', message: finish.message ?? 'the command was lost', details: { command: params.command } },
          outputs: { stdout: out, stderr: err, exit_code: -1 },
          durationMs,
        };
      case 'timeout':
        return {
          kind: 'failed',
          error: {
            code: 'TIMEOUT',
            message: `Command timed out after ${timeoutS} s`,
            details: { command: params.command, timeout_s: timeoutS, stdout: out.slice(0, DETAILS_STDOUT_CHARS), stderr: err.slice(0, DETAILS_STDOUT_CHARS) },
          },
          outputs: { stdout: out, stderr: err, exit_code: -1 },
          durationMs,
        };
      case 'aborted':
        return {
          kind: 'failed',
          error: { code: 'ABORTED', message: 'Command killed: the run was cancelled', details: { command: params.command } },
          outputs: { stdout: out, stderr: err, exit_code: -1 },
          durationMs,
        };
      case 'exit': {
        const exitCode = exitCodeOf(finish.code ?? null, finish.signal ?? null);
        const outputs = { stdout: out, stderr: err, exit_code: exitCode };
        if (exitCode === 0 || params.ignore_errors) {
          const warnings = truncationWarnings({ stdout, stderr });
          return { kind: 'ok', outputs, action: 'default', durationMs, ...(warnings.length > 0 ? { warnings } : {}) };
        }
        const how = finish.signal ? `was killed by ${finish.signal} (exit code ${exitCode})` : `failed with exit code ${exitCode}`;
        return {
          kind: 'failed',
          error: {
            code: 'EXIT_NONZERO',
            message: err === '' ? `Command ${how}` : `Command ${how}: ${err.slice(0, MESSAGE_STDERR_CHARS)}`,
            details: { exit_code: exitCode, stderr: err.slice(0, DETAILS_STDOUT_CHARS), stdout: out.slice(0, DETAILS_STDOUT_CHARS), command: params.command },
          },
          outputs,
          durationMs,
        };
      }
    }
  };

  return { ...shellSpec, paramsSchema: ShellParamsSchema, run };
};

export const shellRunner: NodeRunner<typeof ShellParamsSchema> = makeShellRunner();
