import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { ObservedRunStore } from '../../functions/adapters/observed-run-store.ts';
import { DATABASE_FILE, openSqlite } from '../../functions/adapters/sqlite-database.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import { ConfigurationError, StaleRunError, StoreError } from '../../functions/core/errors.ts';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { RedactingRunStore } from '../../functions/core/redacting-run-store.ts';
import { Redactor } from '../../functions/core/redactor.ts';
import { claimRun, createRun } from '../../functions/core/run-lifecycle.ts';
import type { RunItem } from '../../functions/core/run-model.ts';
import { clearPath, setLatest, setVisits } from '../../functions/core/run-path.ts';
import { aNodeRecord, aRun } from '../support/builders.ts';
import { REPO } from '../support/cli-process.ts';

const root = mkdtempSync(join(tmpdir(), 'flowmend-sqlite-'));
let counter = 0;
const newDir = (): string => join(root, `state-${++counter}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

const makeRun = (runId: string): RunItem =>
  aRun({ runId, workflowName: 'sqlite', createdAt: Date.now(), updatedAt: Date.now(), repairEnabled: false, maxRepairs: 0 });

/** Opens the store and returns the error it failed with, and how long that took. */
const openFailure = (dir: string): { error: unknown; ms: number } => {
  const started = performance.now();
  try {
    SqliteRunStore.open(dir).close();
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
  throw new Error(`opening ${dir} succeeded`);
};

describe('SqliteRunStore: a state dir or database it cannot use', () => {
  it('names the file when it is not a database', () => {
    const dir = newDir();
    mkdirSync(dir);
    writeFileSync(join(dir, DATABASE_FILE), 'this is not a database, just some text that is long enough '.repeat(40));
    const { error, ms } = openFailure(dir);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toContain(join(dir, DATABASE_FILE));
    expect((error as Error).message).toMatch(/not a SQLite database/);
    expect(ms).toBeLessThan(1000);
  });

  it('names a state dir that cannot be created', () => {
    const { error } = openFailure('/proc/nope');
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/the state dir \/proc\/nope cannot be created \(ENOENT\)/);
  });

  it('names a state dir where no file can be written', () => {
    // /proc/self exists and takes no new files, even for root (a chmod'ed dir would not stop root).
    const { error } = openFailure('/proc/self');
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toContain('/proc/self/flowmend.db');
    expect((error as Error).message).toMatch(/cannot be opened/);
  });

  it.skipIf(process.getuid?.() === 0)('names a read-only state dir', () => {
    const dir = newDir();
    mkdirSync(dir, { mode: 0o555 });
    const { error } = openFailure(dir);
    expect((error as Error).message).toContain(join(dir, DATABASE_FILE));
  });

  it('refuses a state dir in the old LevelDB layout and says what to do', () => {
    const dir = newDir();
    mkdirSync(join(dir, 'db'), { recursive: true });
    const { error } = openFailure(dir);
    expect(error).toBeInstanceOf(ConfigurationError);
    expect((error as Error).message).toMatch(/old layout .*mv .* or pass another --state-dir/s);
  });
});

describe('SqliteRunStore: a database another process is writing', () => {
  it('opens a new database while another process holds a write transaction on it, once that one commits', async () => {
    // A new file is in rollback mode until a connection switches it to WAL, which takes its exclusive lock:
    // SQLite answers that switch SQLITE_BUSY at once, without its busy timeout, while another connection
    // writes (20 `flowmend run` started together on a new state dir met it).
    const dir = newDir();
    mkdirSync(dir);
    const holder = `
      const Database = require('better-sqlite3');
      const db = new Database(process.argv[1], { timeout: 10000 });
      db.exec('CREATE TABLE other (a)');
      db.exec('BEGIN IMMEDIATE');
      db.exec('INSERT INTO other VALUES (1)');
      process.stdout.write('writing\\n');
      setTimeout(() => { db.exec('COMMIT'); db.close(); }, 300);`;
    const child = spawn(process.execPath, ['-e', holder, join(dir, DATABASE_FILE)], { cwd: REPO, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    await new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('writing') && resolve()));
    const started = performance.now();
    const { db } = openSqlite(dir);
    try {
      // It waited for the other's commit (300 ms after it began writing), and did not fail at once.
      expect(performance.now() - started).toBeGreaterThan(100);
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.prepare('SELECT a FROM other').all()).toEqual([{ a: 1 }]);
    } finally {
      db.close();
      await exited;
    }
  });
});

describe('SqliteRunStore: durability and atomicity', () => {
  it('opens in WAL mode with synchronous FULL', () => {
    const { db } = openSqlite(newDir());
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('synchronous', { simple: true })).toBe(2);
    db.close();
  });

  it('writes nothing of a commit whose run condition fails', async () => {
    const store = SqliteRunStore.open(newDir());
    const run = makeRun('atomic_run');
    await store.putRun(run, { notExists: true });
    const step = aNodeRecord({ runId: run.runId, seq: 1, nodeId: 'a', status: 'completed', startedAt: 1 });
    const event = { runId: run.runId, key: '00000000', at: 1, type: 'run_succeeded' as const };
    await expect(
      store.commitAdvance({ run: { ...run, seq: 1 }, condition: { ownerId: 'someone-else' }, records: [step], events: [event] }),
    ).rejects.toBeInstanceOf(StaleRunError);
    expect(await store.listRecords(run.runId)).toEqual([]);
    expect(await store.listEvents(run.runId)).toEqual([]);
    store.close();
  });

  it('creates a run in one transaction: its workflow version and its item, or neither (a run id taken writes no version)', async () => {
    const store = SqliteRunStore.open(newDir());
    const observed = new ObservedRunStore(store);
    const workflow = WorkflowSchema.parse({ nodes: [{ id: 'a', type: 'transform', params: { expression: '1' } }], edges: [] });
    const spec = { workflowName: 'sqlite', params: {}, owner: { id: 'o', since: 1 }, repairEnabled: false, maxRepairs: 0, now: 1 };
    await createRun(observed, { ...spec, runId: 'created_run', workflow });
    expect(observed.counters.writes).toBe(1);
    expect((await store.getIrVersion('created_run', 0))?.ir).toEqual(workflow);
    expect((await store.getRun('created_run'))?.status).toBe('running');
    // Another workflow under a run id already taken: refused, and the first version stays as it was.
    await store.putRun(makeRun('taken_run'), { notExists: true });
    const other = WorkflowSchema.parse({ nodes: [{ id: 'b', type: 'transform', params: { expression: '2' } }], edges: [] });
    await expect(createRun(store, { ...spec, runId: 'taken_run', workflow: other })).rejects.toBeInstanceOf(StaleRunError);
    expect(await store.getIrVersion('taken_run', 0)).toBeUndefined();
    store.close();
  });

  it('claims a run in one transaction: of two resumers at once, the one that lost writes nothing', async () => {
    const store = SqliteRunStore.open(newDir());
    const run = { ...makeRun('claimed_run'), status: 'failed' as const, owner: { id: 'gone', since: 1 } };
    await store.putRun(run, { notExists: true });
    const claim = (id: string, now: number) => claimRun(store, run.runId, { owner: { id, since: now }, now, isAlive: async () => false });
    const outcomes = await Promise.allSettled([claim('first', 1000), claim('second', 2000)]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    const winner = outcomes.findIndex((o) => o.status === 'fulfilled');
    expect((await store.getRun(run.runId))?.owner?.id).toBe(['first', 'second'][winner]);
    // Its resume event alone, not the loser's (the two share the event's key).
    const events = await store.listEvents(run.runId);
    expect(events.map((e) => [e.type, e.at])).toEqual([['run_resumed', [1000, 2000][winner]]]);
    store.close();
  });

  it('reports a row it cannot read as a StoreError naming the file', async () => {
    const dir = newDir();
    const store = SqliteRunStore.open(dir);
    await store.putRun(makeRun('corrupt_row'), { notExists: true });
    const { db } = openSqlite(dir);
    db.prepare("UPDATE runs SET body = json_set(body, '$.status', 'bogus') WHERE run_id = 'corrupt_row'").run();
    db.close();
    await expect(store.getRun('corrupt_row')).rejects.toThrow(new RegExp(`corrupt run item of corrupt_row in ${join(dir, DATABASE_FILE)}: status`));
    store.close();
  });
});

describe('SqliteRunStore: a run item path maps, a row a node', () => {
  /** A run that has visited `nodes` nodes, as written by its last step (`rev`). */
  const visited = (runId: string, nodes: number, rev: string): RunItem => {
    const run = { ...makeRun(runId), owner: { id: 'me', since: 1 }, rev };
    for (let i = 0; i < nodes; i += 1) {
      setLatest(run, `n${i}`, i + 1);
      setVisits(run, `n${i}`, 1);
    }
    return run;
  };
  const changesOf = (db: Database.Database): number => (db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;

  it('writes the entries a step changed, not the whole maps, and reads the run back whole', async () => {
    const database = openSqlite(newDir());
    const store = new SqliteRunStore(database);
    const run = visited('path_run', 500, 'r0');
    await store.putRun(run, { notExists: true });
    let before = changesOf(database.db);
    setLatest(run, 'n500', 501);
    setVisits(run, 'n500', 1);
    setVisits(run, 'n3', 2);
    run.rev = 'r1';
    await store.putRun(run, { ownerId: 'me' });
    // The run row and two path rows (each write of the 500 entries changed 500 rows and more).
    expect(changesOf(database.db) - before).toBe(3);
    expect(await store.getRun(run.runId)).toEqual(run);
    before = changesOf(database.db);
    run.rev = 'r2';
    await store.commitAdvance({ run, condition: { ownerId: 'me' }, records: [], events: [] });
    expect(changesOf(database.db) - before).toBe(1);
    store.close();
  });

  it('writes what a walk changed (it empties the maps and fills them again), and the changes of an item it read', async () => {
    const dir = newDir();
    const database = openSqlite(dir);
    const store = new SqliteRunStore(database);
    const run = visited('walked_run', 500, 'r0');
    await store.putRun(run, { notExists: true });
    // A resume's walk: the 499 first nodes replayed as recorded, the last one not reached.
    clearPath(run);
    for (let i = 0; i < 499; i += 1) {
      setLatest(run, `n${i}`, i + 1);
      setVisits(run, `n${i}`, 1);
    }
    let before = changesOf(database.db);
    run.rev = 'r1';
    await store.putRun(run, { ownerId: 'me' });
    // The run row and the one path row dropped (the walk's write used to be whole: the 500 rows deleted, 499 written).
    expect(changesOf(database.db) - before).toBe(2);
    expect(await store.getRun(run.runId)).toEqual(run);
    // An item read from the store (another connection's reader) writes its changes over the rows it was read from.
    const readerDatabase = openSqlite(dir);
    const reader = new SqliteRunStore(readerDatabase);
    const read = await reader.getRun(run.runId);
    if (!read) throw new Error('no run');
    setLatest(read, 'n499', 777);
    read.rev = 'r2';
    before = changesOf(readerDatabase.db);
    await reader.putRun(read, { ownerId: 'me' });
    expect(changesOf(readerDatabase.db) - before).toBe(2);
    expect(await store.getRun(run.runId)).toEqual(read);
    // Read, then moved on by another connection: the read item's changes no longer apply, it is written whole.
    const stale = await reader.getRun(run.runId);
    if (!stale) throw new Error('no run');
    const current = await store.getRun(run.runId);
    if (!current) throw new Error('no run');
    setLatest(current, 'n0', 900);
    current.rev = 'r3';
    await store.putRun(current, { ownerId: 'me' });
    setLatest(stale, 'n1', 901);
    stale.rev = 'r4';
    await reader.putRun(stale, { ownerId: 'me' });
    expect(await store.getRun(run.runId)).toEqual(stale);
    reader.close();
    store.close();
  });

  it('writes the changes through the redacting store the CLI wraps it in; a copy whose maps were redacted whole', async () => {
    // No secret, a secret found nowhere in the maps (an API key in the environment), a secret in a node id.
    for (const [secrets, changed, expected] of [
      [[], 'n100', 2],
      [['a-secret-value'], 'n100', 2],
      [['a-secret-value'], 'step-a-secret-value', 1 + 100 + 101],
    ] as const) {
      const database = openSqlite(newDir());
      const store = new RedactingRunStore(new SqliteRunStore(database), new Redactor(secrets));
      const run = visited('redacted_run', 100, 'r0');
      await store.putRun(run, { notExists: true });
      const before = changesOf(database.db);
      setLatest(run, changed, 101);
      run.rev = 'r1';
      await store.putRun(run, { ownerId: 'me' });
      // The run row and one path row; with its maps redacted: the run row, the 100 rows deleted and 101 written.
      expect(changesOf(database.db) - before).toBe(expected);
      const read = await store.getRun(run.runId);
      expect(Object.keys(read?.latest ?? {})).toHaveLength(101);
      expect(read?.latest[changed.replace('a-secret-value', '[redacted]')]).toBe(101);
      database.db.close();
    }
  });

  it('writes the maps whole when another connection wrote the run since, and after a failed write', async () => {
    const dir = newDir();
    const mine = SqliteRunStore.open(dir);
    const other = SqliteRunStore.open(dir);
    const run = visited('shared_run', 20, 'r0');
    await mine.putRun(run, { notExists: true });
    // Another connection moves the run on (a takeover, a cancel): other entries, fewer of them.
    const theirs = await other.getRun(run.runId);
    if (!theirs) throw new Error('no run');
    clearPath(theirs);
    setLatest(theirs, 'x', 99);
    theirs.rev = 't1';
    await other.putRun(theirs, {});
    // My next write carries one change over rows that are no longer those of my last write: written whole.
    setLatest(run, 'n20', 21);
    run.rev = 'r1';
    await mine.putRun(run, {});
    expect(await other.getRun(run.runId)).toEqual(run);
    // A write that fails (its condition) leaves the rows as they were; the change it carried is written by the next.
    setVisits(run, 'n0', 2);
    run.rev = 'r2';
    await expect(mine.putRun(run, { ownerId: 'someone-else' })).rejects.toBeInstanceOf(StaleRunError);
    expect((await other.getRun(run.runId))?.visits.n0).toBe(1);
    run.rev = 'r3';
    await mine.putRun(run, { ownerId: 'me' });
    expect(await other.getRun(run.runId)).toEqual(run);
    mine.close();
    other.close();
  });

  it('reads a run written by the previous layout (its maps in its body), and moves them to rows at its next write', async () => {
    const dir = newDir();
    const { db } = openSqlite(dir);
    db.exec(`
      CREATE TABLE runs (run_id TEXT PRIMARY KEY, workflow_name TEXT NOT NULL, created_at INTEGER NOT NULL, seq INTEGER NOT NULL, owner_id TEXT, body TEXT NOT NULL);
      CREATE TABLE ir_versions (run_id TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, version)) WITHOUT ROWID;
      CREATE TABLE steps (run_id TEXT NOT NULL, seq INTEGER NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq)) WITHOUT ROWID;
      CREATE TABLE events (run_id TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, key)) WITHOUT ROWID;
      PRAGMA user_version = 2;
    `);
    const old = { ...makeRun('old_run'), latest: { a: 1, b: 2 }, visits: { a: 1, b: 1 }, rev: 'o1' };
    db.prepare('INSERT INTO runs (run_id, workflow_name, created_at, seq, owner_id, body) VALUES (?, ?, ?, ?, ?, ?)').run(
      old.runId,
      old.workflowName,
      old.createdAt,
      old.seq,
      null,
      JSON.stringify(old),
    );
    db.close();
    const store = SqliteRunStore.open(dir);
    const read = await store.getRun(old.runId);
    expect(read).toEqual(old);
    if (!read) throw new Error('no run');
    setLatest(read, 'c', 3);
    read.rev = 'o2';
    await store.putRun(read, {});
    const check = openSqlite(dir).db;
    expect(JSON.parse((check.prepare('SELECT body FROM runs').get() as { body: string }).body)).not.toHaveProperty('latest');
    expect(check.prepare('SELECT node_id, latest, visits FROM run_paths ORDER BY node_id').all()).toEqual([
      { node_id: 'a', latest: 1, visits: 1 },
      { node_id: 'b', latest: 2, visits: 1 },
      { node_id: 'c', latest: 3, visits: null },
    ]);
    check.close();
    expect(await store.getRun(old.runId)).toEqual(read);
    store.close();
  });
});
