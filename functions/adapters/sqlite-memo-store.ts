import type Database from 'better-sqlite3';
import { CorruptItemError, type MemoEntry, MemoEntrySchema, type MemoStore } from '../core/index.ts';
import { sqliteError } from './sqlite-database.ts';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS memo (key TEXT PRIMARY KEY, body TEXT NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
`;

const prepare = (db: Database.Database) => {
  db.exec(SCHEMA);
  return {
    get: db.prepare<[string, number], { body: string }>('SELECT body FROM memo WHERE key = ? AND expires_at > ?'),
    put: db.prepare(
      'INSERT INTO memo (key, body, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET body = excluded.body, expires_at = excluded.expires_at',
    ),
  };
};

/**
 * The memo cache on SQLite: its own table in the state dir's database (`flowmend.db`), shared by every
 * run on the machine. An expired row is not read, and is replaced by the next result of its key.
 */
export class SqliteMemoStore implements MemoStore {
  private prepared: ReturnType<typeof prepare> | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path = 'flowmend.db',
  ) {}

  /** Prepared at first use: a command that reads no memo (status, logs) creates no table. */
  private get statements(): ReturnType<typeof prepare> {
    this.prepared ??= prepare(this.db);
    return this.prepared;
  }

  async getMemo(key: string, now: number): Promise<MemoEntry | undefined> {
    let row: { body: string } | undefined;
    try {
      row = this.statements.get.get(key, now);
    } catch (error) {
      throw sqliteError(this.path, 'reading the memo cache', error);
    }
    if (!row) return undefined;
    const parsed = MemoEntrySchema.safeParse(JSON.parse(row.body));
    if (!parsed.success) throw new CorruptItemError(`corrupt memo entry ${key} in ${this.path}: ${parsed.error.message}`);
    return parsed.data;
  }

  async putMemo(entry: MemoEntry): Promise<void> {
    try {
      this.statements.put.run(entry.key, JSON.stringify(entry), entry.expiresAt);
    } catch (error) {
      throw sqliteError(this.path, 'writing the memo cache', error);
    }
  }
}
