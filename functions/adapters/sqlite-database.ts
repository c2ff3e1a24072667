import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigurationError, CorruptItemError, StoreError, StoreUnavailableError } from '../core/index.ts';
import { makeDir } from './make-dir.ts';

/** The state dir's one database file: the run store's tables, and any other local tables beside them. */
export const DATABASE_FILE = 'flowmend.db';

/**
 * How long a statement waits for another process's write lock before failing with SQLITE_BUSY. A
 * commit holds the lock for well under a millisecond, so only a stuck or very busy writer reaches it.
 */
export const BUSY_TIMEOUT_MS = 10_000;

export interface SqliteDatabase {
  db: Database.Database;
  /** Absolute path of the database file, for messages. */
  path: string;
}

let addonPath: string | undefined;

/**
 * better-sqlite3's native addon, by path. Given none, better-sqlite3 has the `bindings` package search a dozen
 * places for it from the caller's package, which is flowmend's own in the CLI's bundle (its JavaScript is bundled:
 * scripts/build.mjs); the addon is where better-sqlite3's install builds or downloads it, build/Release.
 */
const nativeBinding = (): string => {
  addonPath ??= createRequire(import.meta.url).resolve('better-sqlite3/build/Release/better_sqlite3.node');
  return addonPath;
};

/** SQLite's own error codes (better-sqlite3's `SqliteError.code`), each with what it means for the user. */
const EXPLAIN: Record<string, string> = {
  SQLITE_NOTADB: 'is not a SQLite database (corrupt or another kind of file); move it away to start afresh',
  SQLITE_CORRUPT: 'is corrupt; move it away to start afresh (runs in it are lost), or repair it with the sqlite3 shell (.recover)',
  SQLITE_FULL: 'cannot grow: the disk is full; free some space and retry (the last committed step is safe)',
  SQLITE_IOERR: 'could not be read or written (I/O error); check the disk and the file',
  SQLITE_CANTOPEN: 'cannot be opened; check that the state dir exists and is writable',
  SQLITE_READONLY: 'is read-only here; flowmend needs to write to the state dir and its database',
  SQLITE_PERM: "may not be written (permission denied); check the state dir's permissions",
  SQLITE_BUSY: `stayed locked by another process for ${BUSY_TIMEOUT_MS / 1000} s; retry, or look for a stuck flowmend process`,
};

export const codeOf = (error: unknown): string => String((error as { code?: unknown } | undefined)?.code ?? '');

/** An error from SQLite as a StoreError naming the database file and saying what to do. */
export const sqliteError = (path: string, operation: string, error: unknown): StoreError => {
  if (error instanceof StoreError) return error;
  const code = codeOf(error);
  const base = Object.keys(EXPLAIN).find((known) => code === known || code.startsWith(`${known}_`));
  const detail = error instanceof Error ? error.message : String(error);
  const why = base ? EXPLAIN[base] : `failed (${code || 'unknown error'})`;
  const message = `${operation}: the database ${path} ${why} [${detail}]`;
  // A damaged file reads the same on every try; a lock, a full disk or a permission may change.
  const Kind = base === 'SQLITE_NOTADB' || base === 'SQLITE_CORRUPT' ? CorruptItemError : StoreUnavailableError;
  return new Kind(message, { cause: error, details: { path, code } });
};

const isDirectory = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/** Blocks this thread for `ms` (openSqlite is synchronous, as better-sqlite3 is). */
const sleepSync = (ms: number): void => {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
};

/**
 * For a connection left open when its process ends (`leavesWal`: a CLI command, bin/cli-main.ts), whose WAL
 * stays for the next process, which reads it whole when it opens the file: how many pages the WAL takes
 * before a commit folds it back into the database (SQLite's automatic checkpoint; its default is 1,000), and
 * the size its file is cut back to when a transaction grew it past that. ~800 KB of WAL cost less at open
 * than the making and removal of the file it saves, where SQLite's 4 MB made a `status` ~2 ms slower
 * (docs/performance.md, the fourth 2026-11-27 sitting). `serve`, which closes when it stops, keeps SQLite's
 * defaults: it gains nothing from checkpoints five times as often (docs/development.md measured 100 and 250).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 200;
export const WAL_SIZE_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Opens `path` in WAL mode with `synchronous = FULL`. Switching a database to WAL (once, on a new file) takes its
 * exclusive lock, and SQLite answers SQLITE_BUSY at once, without its busy timeout, while another connection
 * holds a write transaction: many processes starting on a new state dir together (`flowmend run` x 20) met it.
 * So a busy open is tried again, after 5-25 ms, until BUSY_TIMEOUT_MS has passed.
 */
const openWal = (path: string, leavesWal: boolean): Database.Database => {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { timeout: BUSY_TIMEOUT_MS, nativeBinding: nativeBinding() });
      // journal_mode reads the header first, so a file that is not a database fails here, at once.
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      if (leavesWal) {
        db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
        db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      }
      return db;
    } catch (error) {
      db?.close();
      if (!codeOf(error).startsWith('SQLITE_BUSY') || Date.now() >= deadline) throw error;
      sleepSync(5 + Math.random() * 20);
    }
  }
};

/**
 * Opens (creating when needed) `<stateDir>/flowmend.db` in WAL mode with `synchronous = FULL`: a commit
 * returns once it is on disk, and other processes on the machine share the file through SQLite's locks.
 * `leavesWal`: the process will end without closing it (see WAL_AUTOCHECKPOINT_PAGES). Fails fast with a
 * StoreError naming the path when the dir or the file cannot be used.
 */
export const openSqlite = (stateDir: string, { leavesWal = false }: { leavesWal?: boolean } = {}): SqliteDatabase => {
  const dir = resolve(stateDir);
  if (isDirectory(join(dir, 'db'))) {
    throw new ConfigurationError(
      `the state dir ${dir} holds runs in the old layout (a LevelDB under ${join(dir, 'db')}), which this flowmend does not read. ` +
        `Finish or inspect those runs with the flowmend version that wrote them, then move the dir away ` +
        `(mv ${dir} ${dir}.old) or pass another --state-dir; new runs go to ${join(dir, DATABASE_FILE)}.`,
      { details: { stateDir: dir } },
    );
  }
  try {
    makeDir(dir);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new StoreUnavailableError(`the state dir ${dir} cannot be created (${reason}); pass a writable --state-dir or set FLOWMEND_STATE_DIR`, {
      cause: error,
      details: { path: dir, code: reason },
    });
  }
  const path = join(dir, DATABASE_FILE);
  try {
    return { db: openWal(path, leavesWal), path };
  } catch (error) {
    throw sqliteError(path, 'opening the run store', error);
  }
};
