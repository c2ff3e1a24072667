import { fstatSync, readFileSync, writeSync } from 'node:fs';
import { trustExtraCaCerts } from '../functions/adapters/extra-ca-certs.ts';
import { lazyRepairHandler as makeRepairHandler } from '../functions/hosts/local/lazy-repair-handler.ts';

// The CLI's composition root, shared by the bundle (dist/flowmend.cjs, loaded by bin/flowmend.cjs) and
// the TypeScript fallback (bin/flowmend.ts). No top-level await: the bundle is CommonJS.

/**
 * Writes the CLI's output straight to its file descriptor. Creating process.stdout loads Node's stream and
 * net modules (5-9 ms of a command here, for a pipe or a terminal), and on Linux its writes to a pipe, a
 * file or a terminal are synchronous anyway. A reader that goes away (`| head`, EPIPE) must not stop a run
 * half-way: the run finishes and stays durable, and what it prints goes nowhere. A descriptor left
 * non-blocking by another process (EAGAIN) gets the rest through Node's stream, which waits for it.
 */
const directWriter = (fd: 1 | 2, stream: () => NodeJS.WriteStream): ((text: string) => void) & { streamed: () => boolean } => {
  let fallback: NodeJS.WriteStream | undefined;
  const write = (text: string): void => {
    if (fallback) {
      fallback.write(text);
      return;
    }
    const bytes = Buffer.from(text, 'utf8');
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw error;
      fallback = stream();
      fallback.on('error', (streamError: NodeJS.ErrnoException) => {
        if (streamError.code !== 'EPIPE') throw streamError;
      });
      fallback.write(bytes.subarray(offset));
    }
  };
  /** Whether some of the output went through Node's stream, which may still hold it. */
  return Object.assign(write, { streamed: () => fallback !== undefined });
};
/**
 * Piped stdin (`echo hi | flowmend run wf.pflow.md`) or a file (`< data.txt`), read whole; nothing from a
 * terminal, /dev/null or a socket. A socket is what a parent process's pipe often is (Node, agents' shells),
 * and one its parent never closes would block the run forever: pflow reads real pipes only for that reason.
 */
const readStdin = (): string | undefined => {
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isFile() ? readFileSync(0, 'utf8') : undefined;
  } catch {
    return undefined;
  }
};

const stdout = directWriter(1, () => process.stdout);
const stderr = directWriter(2, () => process.stderr);

/**
 * Runs one command line (argv without node and the script) and sets the process's exit code. With `endProcess`
 * (the bins, whose process is the command's), a command on the local store ends the process itself (below);
 * without it (the build's code-cache producer, tests: several command lines in one process) each command closes
 * its store, and only `serve` ends the process.
 */
export const main = async (argv: readonly string[], { endProcess = false }: { endProcess?: boolean } = {}): Promise<number> => {
  // NODE_EXTRA_CA_CERTS, handed over by the bin's shell line so that Node starts without reading it.
  trustExtraCaCerts(process.env, stderr);
  const { runCli } = await import('../functions/hosts/cli/commands.ts');

  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  let closeStore: (() => void) | undefined;
  const code = await runCli(argv, {
    stdout,
    stderr,
    readStdin,
    env: process.env,
    hostOptions: { makeRepairHandler },
    ...(endProcess
      ? {
          releaseStore: (close: () => void) => {
            closeStore = close;
          },
        }
      : {}),
  });
  process.exitCode = code;
  // serve leaves runs it was driving in the background; they are durable and the next serve resumes them.
  if (argv[0] === 'serve') process.exit(code);
  // A command on the local store ends here without closing it. Closing SQLite's last connection folds the WAL
  // into the database (two fsyncs) and deletes it, and the next command that writes makes it again (two more,
  // the file's header and its directory entry) and grows it, each commit's fsync then also writing the file's
  // new size: 1-8 ms of a `resume` and ~40 ms of a 100-node run here. Left, the WAL is read back by the next
  // process that opens the database, as after any exit; every commit in it is already on disk (synchronous =
  // FULL), and SQLite's own checkpoint folds it in every WAL_AUTOCHECKPOINT_PAGES. process.exit skips the
  // close that better-sqlite3 makes at the end of a process; output that went through a stream (EAGAIN) may be
  // waiting in it, so such a process closes the store and ends as usual.
  if (closeStore) {
    if (!stdout.streamed() && !stderr.streamed()) process.exit(code);
    closeStore();
  }
  return code;
};
