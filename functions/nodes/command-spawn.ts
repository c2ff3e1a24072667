import { spawn } from 'node:child_process';

/**
 * How a shell node's command is started: `/bin/sh -c command` in a process group of its own (its pgid is its
 * pid, so the runner ends the group with `kill(-pid)` wherever the process was started from), with its
 * stdin written and closed at once. The shell runner starts it in its own process (`spawnDirect`) unless its
 * host gives another way: `serve` starts commands from a small helper process
 * (hosts/local/command-helper.ts), since a fork of serve itself blocks its thread for ~10 ms.
 */
export interface CommandRequest {
  readonly command: string;
  readonly cwd: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdin: string | undefined;
}

export type CommandStream = 'stdout' | 'stderr';

/** What becomes of a started command, in the order its process reports it (a child process's own events). */
export interface CommandEvents {
  output(stream: CommandStream, chunk: Buffer): void;
  closed(stream: CommandStream): void;
  exit(code: number | null, signal: NodeJS.Signals | null): void;
  /** It could not be started (`pid` is then undefined), or its pipes failed. */
  error(error: NodeJS.ErrnoException): void;
  /** The process that started it is gone, and with it the pipes (a helper that died): its result is unknown. */
  lost?(message: string): void;
}

export interface StartedCommand {
  readonly pid: number | undefined;
  /** The runner is done with it: stop reading its output. */
  release(): void;
}

/** Starts a command; what follows comes through `events`. A throw is a failure to start, as `spawn`'s own. */
export type SpawnCommand = (request: CommandRequest, events: CommandEvents) => Promise<StartedCommand>;

/** Starts the command from this process (child_process.spawn, which forks it). */
export const spawnDirect: SpawnCommand = async (request, events) => {
  const child = spawn('/bin/sh', ['-c', request.command], { cwd: request.cwd, env: request.env, detached: true, stdio: 'pipe' });
  child.stdout.on('data', (chunk: Buffer) => events.output('stdout', chunk));
  child.stderr.on('data', (chunk: Buffer) => events.output('stderr', chunk));
  child.stdout.on('close', () => events.closed('stdout'));
  child.stderr.on('close', () => events.closed('stderr'));
  child.on('error', (error) => events.error(error));
  child.on('exit', (code, signal) => events.exit(code, signal));
  // A command that never reads stdin closes the pipe early; EPIPE is not a failure.
  child.stdin.on('error', () => {});
  if (request.stdin === undefined) child.stdin.end();
  else child.stdin.end(request.stdin);
  return {
    pid: child.pid,
    release: () => {
      child.stdout.destroy();
      child.stderr.destroy();
    },
  };
};
