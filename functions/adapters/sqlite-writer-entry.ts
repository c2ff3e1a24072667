// The writer thread of `serve` (sqlite-writer-thread.ts): one connection to the state dir's database that commits
// the writes every run store of the process sends it, grouped by turn of this thread's event loop (GroupCommit).
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { openSqlite } from './sqlite-database.ts';
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
  try {
    const database = openSqlite((workerData as SqliteWriterData).stateDir);
    ensureRunSchema(database.db);
    commit = new GroupCommit(database.db, database.path);
  } catch (error) {
    tell({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    return;
  }
  port.on('message', (message: ToWriter) => {
    if (message.type === 'port') serveStore(commit, message.port);
    // Everything received so far is queued: an empty write resolves with the group that commits it; the answer
    // goes out a turn later, after the stores' answers of that group.
    else void commit.submit('draining', []).finally(() => setImmediate(() => tell({ type: 'drained' })));
  });
  tell({ type: 'ready' });
};

if (parentPort) run(parentPort);
