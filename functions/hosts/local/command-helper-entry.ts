// The command helper's process (started by command-helper.ts, bundled by scripts/build.mjs into
// dist/command-helper.cjs): starts each shell command it is asked to, from its own small address space, and
// sends back its pid, output and exit. Its environment is empty (serve starts it so): a command's $PPID is
// this process, whose /proc/<pid>/environ holds nothing of the engine's. It ends when serve's channel closes.
import { spawnDirect } from '../../nodes/command-spawn.ts';
import type { FromHelper, ToHelper } from './command-helper.ts';

const send = (message: FromHelper): void => {
  // A channel already closed (serve gone): this process is ending.
  if (process.connected) process.send?.(message);
};

const errorOf = (error: NodeJS.ErrnoException) => ({ message: error.message, code: error.code, errno: error.errno, syscall: error.syscall });

/** How to stop reading each started command's output, once serve's runner is done with it. */
const releases = new Map<number, () => void>();

process.on('message', (message: ToHelper) => {
  if (message.type === 'release') {
    releases.get(message.id)?.();
    releases.delete(message.id);
    return;
  }
  const { id, request } = message;
  spawnDirect(request, {
    output: (stream, chunk) => send({ type: 'output', id, stream, chunk }),
    closed: (stream) => send({ type: 'closed', id, stream }),
    exit: (code, signal) => send({ type: 'exit', id, code, signal }),
    error: (error) => send({ type: 'error', id, error: errorOf(error) }),
  }).then(
    (started) => {
      releases.set(id, () => started.release());
      send({ type: 'started', id, pid: started.pid });
    },
    (error: NodeJS.ErrnoException) => send({ type: 'error', id, error: errorOf(error), thrown: true }),
  );
});

process.on('disconnect', () => process.exit(0));
