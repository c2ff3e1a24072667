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
const directWriter = (fd: 1 | 2, stream: () => NodeJS.WriteStream): ((text: string) => void) => {
  let fallback: NodeJS.WriteStream | undefined;
  return (text) => {
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

/** Runs one command line (argv without node and the script) and sets the process's exit code. */
export const main = async (argv: readonly string[]): Promise<number> => {
  // NODE_EXTRA_CA_CERTS, handed over by the bin's shell line so that Node starts without reading it.
  trustExtraCaCerts(process.env, stderr);
  const { runCli } = await import('../functions/hosts/cli/commands.ts');

  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const code = await runCli(argv, {
    stdout,
    stderr,
    readStdin,
    env: process.env,
    hostOptions: { makeRepairHandler },
  });
  process.exitCode = code;
  // serve leaves runs it was driving in the background; they are durable and the next serve resumes them.
  if (argv[0] === 'serve') process.exit(code);
  return code;
};
