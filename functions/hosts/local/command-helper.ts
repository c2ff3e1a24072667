import { type ChildProcess, fork } from 'node:child_process';
import { findBuiltFile } from '../../adapters/built-file.ts';
import { type CommandEvents, type CommandRequest, type CommandStream, type SpawnCommand, type StartedCommand, spawnDirect } from '../../nodes/command-spawn.ts';

/**
 * `serve`'s command helper: a small Node process, started once, from which shell nodes' commands are started.
 * A command is a fork and an exec, and a fork copies the page tables of the process that forks: from serve
 * (~150 MiB) it held serve's one thread for ~10 ms a command here, and every run it drives waited. The
 * helper forks from its own ~40 MiB beside serve's thread, which only sends a request and reads messages.
 * What a command does and records is the same either way (the runner kills its process group by pid from
 * serve, records the group and sweeps what left it as before). The helper's code is command-helper-entry.ts,
 * bundled by scripts/build.mjs into dist/command-helper.cjs. Where none is built, or once the helper has
 * stopped (its commands are then ended and their nodes fail with COMMAND_LOST), commands start from serve.
 */

/** The helper's file, or undefined where none is built. */
export const findCommandHelperFile = (): string | undefined => findBuiltFile('command-helper.cjs', import.meta.url, '../../../');

export type ToHelper = { type: 'spawn'; id: number; request: CommandRequest } | { type: 'release'; id: number };

interface HelperError {
  message: string;
  code?: string | undefined;
  errno?: number | undefined;
  syscall?: string | undefined;
}

export type FromHelper =
  | { type: 'started'; id: number; pid: number | undefined }
  | { type: 'output'; id: number; stream: CommandStream; chunk: Uint8Array }
  | { type: 'closed'; id: number; stream: CommandStream }
  | { type: 'exit'; id: number; code: number | null; signal: NodeJS.Signals | null }
  /** `thrown`: the spawn itself threw (a failure to start, as spawn's own throw). */
  | { type: 'error'; id: number; error: HelperError; thrown?: boolean };

interface InFlight {
  readonly events: CommandEvents;
  start(started: StartedCommand): void;
  fail(error: NodeJS.ErrnoException): void;
  started: boolean;
}

const errnoError = (error: HelperError): NodeJS.ErrnoException =>
  Object.assign(new Error(error.message), {
    ...(error.code !== undefined ? { code: error.code } : {}),
    ...(error.errno !== undefined ? { errno: error.errno } : {}),
    ...(error.syscall !== undefined ? { syscall: error.syscall } : {}),
  });

export class CommandHelper {
  private child: ChildProcess | undefined;
  /** Set once the helper could not start or has stopped: commands start from this process from then on. */
  private gone = false;
  private nextId = 1;
  private readonly inFlight = new Map<number, InFlight>();

  constructor(
    /** The helper's file (`findCommandHelperFile()`); undefined: commands start from this process. */
    private readonly file: string | undefined,
    private readonly onStopped: (message: string) => void = () => {},
  ) {}

  /** The pid of the helper process, once started (tests). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  readonly spawn: SpawnCommand = (request, events) => {
    const child = this.started();
    if (!child) return spawnDirect(request, events);
    const id = this.nextId++;
    return new Promise<StartedCommand>((resolve, reject) => {
      const entry: InFlight = {
        events,
        started: false,
        start: (started) => {
          entry.started = true;
          resolve(started);
        },
        fail: (error) => {
          entry.started = true;
          reject(error);
        },
      };
      this.inFlight.set(id, entry);
      child.send({ type: 'spawn', id, request } satisfies ToHelper);
    });
  };

  /**
   * Stops the helper (serve's shutdown), saying nothing to the runners of commands still running: their runs stay
   * `running`, as when serve itself stops, and the next serve resumes them (the node runs again).
   */
  close(): void {
    const child = this.child;
    this.gone = true;
    this.child = undefined;
    this.inFlight.clear();
    child?.removeAllListeners();
    child?.kill();
  }

  private started(): ChildProcess | undefined {
    if (this.child || this.gone) return this.child;
    if (this.file === undefined) {
      this.gone = true;
      return undefined;
    }
    // An empty environment: nothing of the engine's reaches the helper, nor its commands. Not serve's Node flags but
    // a 1 MiB young generation and no V8 helper threads: a smaller process forks faster, and what it allocates is
    // short messages (under 50 runs of 10 shell nodes: 54 against 63 MiB at its peak, 3.3 against 4.2-4.9 s of CPU).
    const child = fork(this.file, [], {
      env: {},
      execArgv: ['--max-semi-space-size=1', '--single-threaded'],
      serialization: 'advanced',
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    child.on('message', (message: FromHelper) => this.received(message));
    child.on('error', (error) => this.ended(`the command helper failed: ${error.message}`));
    child.on('exit', (code, signal) => this.ended(`the command helper stopped (${signal ?? `exit code ${code}`})`));
    // Serve's own handles keep it alive; the helper must not keep a process that is otherwise done from ending.
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }

  private received(message: FromHelper): void {
    const entry = this.inFlight.get(message.id);
    if (!entry) return;
    switch (message.type) {
      case 'started': {
        if (entry.started) return;
        entry.start({ pid: message.pid, release: this.releaseOf(message.id) });
        return;
      }
      case 'output':
        entry.events.output(message.stream, Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
        return;
      case 'closed':
        entry.events.closed(message.stream);
        return;
      case 'exit':
        entry.events.exit(message.code, message.signal);
        return;
      case 'error':
        if (message.thrown) {
          this.inFlight.delete(message.id);
          entry.fail(errnoError(message.error));
          return;
        }
        // A failure to start comes before `started` (spawn reports it on the next tick): the command has no pid.
        if (!entry.started) entry.start({ pid: undefined, release: this.releaseOf(message.id) });
        entry.events.error(errnoError(message.error));
        return;
    }
  }

  /** Done with a command: its messages are not wanted any more, nor its output read. */
  private releaseOf(id: number): () => void {
    return () => {
      this.inFlight.delete(id);
      if (this.child?.connected) this.child.send({ type: 'release', id } satisfies ToHelper);
    };
  }

  /** The helper is gone: the commands it started lost their pipes, so each is ended and its node told so. */
  private ended(reason: string): void {
    if (this.child === undefined) return;
    this.gone = true;
    this.child = undefined;
    this.onStopped(reason);
    const message = `${reason}, and with it the pipes of this command, which was ended; commands start from serve itself from now on`;
    for (const [id, entry] of this.inFlight) {
      this.inFlight.delete(id);
      if (!entry.started) entry.start({ pid: undefined, release: () => {} });
      entry.events.lost?.(message);
    }
  }
}
