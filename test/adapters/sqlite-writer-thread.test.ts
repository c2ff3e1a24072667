import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MessageChannel } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqlite } from '../../functions/adapters/sqlite-database.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import { findSqliteWriterFile, type SqliteWriterThread, startSqliteWriter } from '../../functions/adapters/sqlite-writer-thread.ts';
import { ConfigurationError, StaleRunError, StoreUnavailableError } from '../../functions/core/errors.ts';
import { claimRun } from '../../functions/core/run-lifecycle.ts';
import type { RunItem } from '../../functions/core/run-model.ts';
import { aRun } from '../support/builders.ts';

// serve's writer thread (the build's dist/sqlite-writer.cjs) under the run store: what crosses the thread,
// and what a store does when the thread stops. The RunStore contract runs through it too (run-store.contract.test.ts).
const root = mkdtempSync(join(tmpdir(), 'flowmend-writer-'));
let counter = 0;
const newDir = (): string => join(root, `state-${++counter}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const start = async (dir: string, stopped: string[] = []): Promise<SqliteWriterThread> => {
  const file = findSqliteWriterFile();
  if (!file) throw new Error('dist/sqlite-writer.cjs is missing: run node scripts/build.mjs first');
  return startSqliteWriter(file, dir, (message) => stopped.push(message));
};
const makeRun = (runId: string): RunItem =>
  aRun({ runId, workflowName: 'writer', createdAt: Date.now(), updatedAt: Date.now(), repairEnabled: false, maxRepairs: 0 });

/** Holds the database's write lock from another connection until the returned function is called. */
const holdWriteLock = (dir: string): (() => void) => {
  const { db } = openSqlite(dir);
  db.exec('BEGIN IMMEDIATE');
  return () => {
    db.exec('COMMIT');
    db.close();
  };
};

describe('SqliteRunStore through the writer thread', () => {
  it('commits the writes of two stores, one condition at a time: of two resumers at once, one wins and the other writes nothing', async () => {
    const dir = newDir();
    const writer = await start(dir);
    const [a, b] = [0, 1].map(() => SqliteRunStore.open(dir, { writerPort: writer.port(), everyWriteToWriter: true })) as [SqliteRunStore, SqliteRunStore];
    const run = { ...makeRun('raced_run'), status: 'failed' as const, owner: { id: 'gone', since: 1 } };
    await a.putRun(run, { notExists: true });
    const claim = (store: SqliteRunStore, id: string, now: number) =>
      claimRun(store, run.runId, { owner: { id, since: now }, now, isAlive: async () => false });
    const outcomes = await Promise.allSettled([claim(a, 'first', 1000), claim(b, 'second', 2000)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    // The loser finds the run taken (busy, or its conditional write stale), not an outage.
    const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(['RunBusyError', 'StaleRunError']).toContain((lost.reason as Error).name);
    const winner = outcomes.findIndex((o) => o.status === 'fulfilled');
    expect((await b.getRun(run.runId))?.owner?.id).toBe(['first', 'second'][winner]);
    expect((await a.listEvents(run.runId)).map((e) => e.type)).toEqual(['run_resumed']);
    // A condition's failure keeps its class and details across the thread: the engine tells a taken run from an outage by it.
    const stale = await a.putRun({ ...run, seq: 9 }, { seq: 7 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(StaleRunError);
    expect(stale).toMatchObject({ message: `run ${run.runId} was moved on by another writer (its seq is not 7)`, details: { runId: run.runId, seq: 7 } });
    a.close();
    b.close();
    await writer.close();
  });

  it('answers a write SQLite fails with a StoreError naming the database and the operation, and keeps committing the others', async () => {
    const dir = newDir();
    const writer = await start(dir);
    const store = SqliteRunStore.open(dir, { writerPort: writer.port(), everyWriteToWriter: true });
    const run = makeRun('kept_run');
    await store.putRun(run, { notExists: true });
    const { db, path } = openSqlite(dir);
    db.exec('DROP TABLE events');
    db.close();
    const event = { runId: run.runId, key: '00000001', at: 1, type: 'run_succeeded' as const };
    const [failed, written] = await Promise.allSettled([store.appendEvents([event]), store.putRun({ ...run, seq: 1 }, { seq: 0 })]);
    expect(failed.status).toBe('rejected');
    const error = (failed as PromiseRejectedResult).reason as Error;
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error.message).toContain(`appending events: the database ${path}`);
    expect(error.message).toMatch(/no such table: events/);
    expect(written.status).toBe('fulfilled');
    expect((await store.getRun(run.runId))?.seq).toBe(1);
    store.close();
    await writer.close();
  });

  it('goes on with its own connection once the thread has stopped', async () => {
    const dir = newDir();
    const stopped: string[] = [];
    const writer = await start(dir, stopped);
    const store = SqliteRunStore.open(dir, { writerPort: writer.port(), everyWriteToWriter: true });
    await store.putRun(makeRun('before_run'), { notExists: true });
    await writer.kill();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stopped).toEqual([expect.stringMatching(/^the database writer thread stopped \(exit code 1\); each thread now commits its own writes$/)]);
    expect(writer.port()).toBeUndefined();
    await store.putRun(makeRun('after_run'), { notExists: true });
    const reader = SqliteRunStore.open(dir);
    expect((await reader.listRuns({ limit: 10 })).map((r) => r.runId).sort()).toEqual(['after_run', 'before_run']);
    reader.close();
    store.close();
  });

  it('fails a write whose writer went away before it answered (it may or may not be on disk), then commits on its own connection', async () => {
    const dir = newDir();
    // The writer's end of the port takes the write and goes away without an answer, as a thread that stops mid-commit.
    const { port1, port2 } = new MessageChannel();
    port2.once('message', () => port2.close());
    const store = SqliteRunStore.open(dir, { writerPort: port1, everyWriteToWriter: true });
    const run = makeRun('unanswered_run');
    const error = await store.putRun(run, { notExists: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).message).toMatch(/writer thread of .*flowmend\.db stopped before it answered: this write may or may not be on disk/);
    expect(await store.getRun(run.runId)).toBeUndefined();
    await store.putRun(run, { notExists: true });
    expect((await store.getRun(run.runId))?.runId).toBe(run.runId);
    store.close();
  });

  it('commits what it holds before it stops when closed', async () => {
    const dir = newDir();
    const writer = await start(dir);
    const store = SqliteRunStore.open(dir, { writerPort: writer.port(), everyWriteToWriter: true });
    const release = holdWriteLock(dir);
    const writes = ['a', 'b', 'c'].map((id) => store.putRun(makeRun(`held_${id}`), { notExists: true }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = writer.close();
    release();
    await closing;
    await Promise.all(writes);
    const reader = SqliteRunStore.open(dir);
    expect((await reader.listRuns({ limit: 10 })).map((r) => r.runId).sort()).toEqual(['held_a', 'held_b', 'held_c']);
    reader.close();
    store.close();
  });

  it('fails to start with the error opening the database gave, of its class (serve then fails to start as the CLI would)', async () => {
    const dir = newDir();
    mkdirSync(join(dir, 'db'), { recursive: true });
    const stopped: string[] = [];
    const error = await start(dir, stopped).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toContain(`the state dir ${dir} holds runs in the old layout`);
    // Its thread ends then, and that is not reported as a writer lost while serve runs.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(stopped).toEqual([]);
  });
});

describe("SqliteRunStore with serve's routing: a write made alone on its own connection", () => {
  /** A writer's end that answers every write without committing it, and keeps what it was sent. */
  const answeringPort = () => {
    const { port1, port2 } = new MessageChannel();
    const received: { id: number; operation: string }[][] = [];
    port2.on('message', (requests: { id: number; operation: string }[]) => {
      received.push(requests.map(({ id, operation }) => ({ id, operation })));
      port2.postMessage(requests.map(({ id }) => ({ id })));
    });
    return { port: port1, received, close: () => port2.close() };
  };

  it('commits a write made alone itself, and sends writes made together to the writer thread', async () => {
    const dir = newDir();
    const writer = answeringPort();
    const store = SqliteRunStore.open(dir, { writerPort: writer.port });
    await store.putRun(makeRun('alone_run'), { notExists: true });
    expect(writer.received).toEqual([]);
    expect((await store.getRun('alone_run'))?.runId).toBe('alone_run');
    // Two writes in one turn: one message to the thread, which answers without committing (nothing on disk here).
    await Promise.all([store.putRun(makeRun('together_a'), { notExists: true }), store.putRun(makeRun('together_b'), { notExists: true })]);
    expect(writer.received).toEqual([
      [
        { id: 2, operation: 'writing a run' },
        { id: 3, operation: 'writing a run' },
      ],
    ]);
    expect(await store.getRun('together_a')).toBeUndefined();
    store.close();
    writer.close();
  });

  it("keeps a store's writes in order: writes made while its own commit waits for the lock follow it on its own connection", async () => {
    const dir = newDir();
    const writer = answeringPort();
    const store = SqliteRunStore.open(dir, { writerPort: writer.port });
    const run = makeRun('ordered_run');
    await store.putRun(run, { notExists: true });
    const release = holdWriteLock(dir);
    const first = store.putRun({ ...run, seq: 1 }, { seq: 0 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Made together, later: on the thread they could commit before the first; they wait behind it instead.
    const later = Promise.all([store.putRun({ ...run, seq: 2 }, { seq: 1 }), store.putRun(makeRun('other_run'), { notExists: true })]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    release();
    await Promise.all([first, later]);
    expect(writer.received).toEqual([]);
    expect((await store.getRun(run.runId))?.seq).toBe(2);
    expect((await store.getRun('other_run'))?.runId).toBe('other_run');
    store.close();
    writer.close();
  });
});
