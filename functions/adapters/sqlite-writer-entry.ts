// The writer thread of `serve` (sqlite-writer-thread.ts): one connection to the state dir's database that commits
// the writes every run store of the process sends it, grouped by turn of this thread's event loop (GroupCommit).
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { openSqlite, type SqliteDatabase } from './sqlite-database.ts';
import { ensureRunSchema } from './sqlite-run-schema.ts';
import type { WriteReply, WriteRequest } from './sqlite-writer-client.ts';
import type { FromWriter, SqliteWriterData, ToWriter } from './sqlite-writer-thread.ts';
import { failureOf, GroupCommit } from './sqlite-writes.ts';

/** Answers one store's port: its writes join the thread's groups; the answers of a turn go back in one message. */
const serveStore = (commit: GroupCommit, port: MessagePort): void => {
  let outbox: WriteReply[] = [];
  const answer = (reply: WriteReply): void => {
    outbox.push(reply);
    if (outbox.length === 1) {
      setImmediate(() => {
        port.postMessage(outbox);
        outbox = [];
      });
    }
  };
  port.on('message', (requests: readonly WriteRequest[]) => {
    for (const { id, operation, ops } of requests) {
      commit.submit(operation, ops).then(
        () => answer({ id }),
        (error: unknown) => answer({ id, failure: failureOf(error) }),
      );
    }
  });
};

const run = (port: NonNullable<typeof parentPort>): void => {
  const tell = (message: FromWriter): void => port.postMessage(message);
  let commit: GroupCommit;
  let database: SqliteDatabase;
  try {
    database = openSqlite((workerData as SqliteWriterData).stateDir);
    ensureRunSchema(database.db);
    commit = new GroupCommit(database.db, database.path);
  } catch (error) {
    const { name = 'Error', message = String(error), details } = error as { name?: string; message?: string; details?: Record<string, unknown> };
    tell({ type: 'failed', error: { name, message, ...(details === undefined ? {} : { details }) } });
    return;
  }
  port.on('message', (message: ToWriter) => {
    if (message.type === 'port') serveStore(commit, message.port);
    else if (message.type === 'stop') {
      // What is still queued is abandoned, as a process that stops leaves it (each store's write then fails or never settles).
      commit.close();
      database.db.close();
      process.exit(0);
    }
    // Everything received so far is queued: an empty write resolves with the group that commits it; the answer
    // goes out a turn later, after the stores' answers of that group.
    else void commit.submit('draining', []).finally(() => setImmediate(() => tell({ type: 'drained' })));
  });
  tell({ type: 'ready' });
};

if (parentPort) run(parentPort);
