import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { ConfigurationError, CorruptItemError, StoreUnavailableError } from '../core/index.ts';
import { findBuiltFile } from './built-file.ts';

/**
 * `serve`'s writer thread: one connection that commits the run stores' writes of every thread of the process
 * (serve's own and its workers'), so that the fsync of a group commit blocks none of the threads that drive
 * runs and the workers' writes share its groups instead of contending for the write lock. Reads stay on each
 * thread's own connection (WAL: a committed write is seen by the next read). The thread's code is
 * sqlite-writer-entry.ts, bundled by scripts/build.mjs into dist/sqlite-writer.cjs.
 */

/** The writer thread's file, or undefined where none is built (each thread then commits its own writes). */
export const findSqliteWriterFile = (): string | undefined => findBuiltFile('sqlite-writer.cjs', import.meta.url, '../../');

export interface SqliteWriterData {
  stateDir: string;
}

/**
 * What the starting thread sends the writer: a port for one more store, a request to commit what it holds and
 * answer, or to stop (it closes its connection and ends its thread itself: a thread terminated from outside
 * while better-sqlite3 throws from a statement aborts the whole process).
 */
export type ToWriter = { type: 'port'; port: MessagePort } | { type: 'drain' } | { type: 'stop' };
export type FromWriter =
  | { type: 'ready' }
  | { type: 'drained' }
  | { type: 'failed'; error: { name: string; message: string; details?: Record<string, unknown> } };

/** The error the writer could not open the database with, as its class again: serve fails to start with it as the CLI would. */
const openingError = ({ name, message, details }: { name: string; message: string; details?: Record<string, unknown> }): Error => {
  const options = details === undefined ? {} : { details };
  if (name === 'ConfigurationError') return new ConfigurationError(message, options);
  if (name === 'CorruptItemError') return new CorruptItemError(message, options);
  return new StoreUnavailableError(message, options);
};

export interface SqliteWriterThread {
  /** A port for one run store (SqliteRunStoreOptions.writerPort), in this thread or another one; undefined once the writer has stopped. */
  port(): MessagePort | undefined;
  /** Commits what the writer holds, then stops it. */
  close(): Promise<void>;
  /** Ends the thread at once, wherever it is, as a crash would (tests). */
  kill(): Promise<void>;
}

/** How long `close` waits for the writer to commit what it holds before it stops it anyway. */
const DRAIN_TIMEOUT_MS = 5_000;

/**
 * Starts the writer thread on `stateDir`'s database without waiting for it: its ports can be handed out at once
 * (what a store sends before the thread listens waits in the port). `ready` settles once it has opened the
 * database, or rejects with the error opening it gave (handled here too, so that one never awaited is not an
 * unhandled rejection). `onStopped` hears of a writer that stopped on its own.
 */
export const launchSqliteWriter = (file: string, stateDir: string, onStopped: (message: string) => void): SqliteWriterThread & { ready: Promise<void> } => {
  const data: SqliteWriterData = { stateDir };
  // Its heap holds a turn's writes at most: a young generation of V8's default size for a whole process is not needed.
  const worker = new Worker(file, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: 4 } });
  // It alone keeps no process alive (a serve that fails to start exits): a store's port is held while it has writes out.
  worker.unref();
  let running = true;
  let closing = false;
  const drained: (() => void)[] = [];
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (message: FromWriter) => {
      if (message.type === 'ready') resolve();
      else if (message.type === 'failed') {
        // Its thread ends with nothing to do: not a writer that stopped while serve ran.
        closing = true;
        reject(openingError(message.error));
      } else for (const done of drained.splice(0)) done();
    });
    worker.on('error', reject);
    worker.once('exit', (code) => {
      running = false;
      for (const done of drained.splice(0)) done();
      if (!closing) onStopped(`the database writer thread stopped (exit code ${code}); each thread now commits its own writes`);
      reject(new Error(`the database writer thread stopped (exit code ${code})`));
    });
  });
  ready.catch(() => undefined);
  return {
    ready,
    port: () => {
      if (!running) return undefined;
      const { port1, port2 } = new MessageChannel();
      worker.postMessage({ type: 'port', port: port2 } satisfies ToWriter, [port2]);
      return port1;
    },
    close: async () => {
      closing = true;
      if (!running) return;
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
      await new Promise<void>((resolve) => {
        drained.push(resolve);
        worker.postMessage({ type: 'drain' } satisfies ToWriter);
        setTimeout(resolve, DRAIN_TIMEOUT_MS).unref();
      });
      worker.postMessage({ type: 'stop' } satisfies ToWriter);
      await exited;
    },
    kill: async () => {
      await worker.terminate();
    },
  };
};

/** launchSqliteWriter, once the writer has opened the database. */
export const startSqliteWriter = async (file: string, stateDir: string, onStopped: (message: string) => void): Promise<SqliteWriterThread> => {
  const writer = launchSqliteWriter(file, stateDir, onStopped);
  await writer.ready;
  return writer;
};
