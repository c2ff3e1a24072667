import type Database from 'better-sqlite3';
import type { FlowDocument, FlowStore } from '../core/index.ts';
import { CorruptItemError } from '../core/index.ts';
import { sqliteError } from './sqlite-database.ts';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS flow (key TEXT PRIMARY KEY, version INTEGER NOT NULL, body TEXT NOT NULL) WITHOUT ROWID;
`;

const prepare = (db: Database.Database) => {
  db.exec(SCHEMA);
  return {
    get: db.prepare<[string], { version: number; body: string }>('SELECT version, body FROM flow WHERE key = ?'),
    insert: db.prepare('INSERT INTO flow (key, version, body) VALUES (?, 1, ?) ON CONFLICT (key) DO NOTHING'),
    update: db.prepare('UPDATE flow SET version = version + 1, body = ? WHERE key = ? AND version = ?'),
  };
};

/**
 * Flow control's keys on SQLite: a table of the state dir's database (`flowmend.db`), shared by every
 * process on the machine. One statement per write, each atomic under SQLite's write lock: the version in
 * its WHERE clause is the compare-and-swap.
 */
export class SqliteFlowStore implements FlowStore {
  private prepared: ReturnType<typeof prepare> | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path = 'flowmend.db',
  ) {}

  /** Prepared at first use: a command that uses no flow control creates no table. */
  private get statements(): ReturnType<typeof prepare> {
    this.prepared ??= prepare(this.db);
    return this.prepared;
  }

  async getFlow(key: string): Promise<FlowDocument | undefined> {
    let row: { version: number; body: string } | undefined;
    try {
      row = this.statements.get.get(key);
    } catch (error) {
      throw sqliteError(this.path, 'reading flow control', error);
    }
    return row ? { version: row.version, body: this.parse(key, row.body) } : undefined;
  }

  /** Read, change and write in one IMMEDIATE transaction: it holds the write lock, so no writer on the machine retries. */
  async changeAtomically<T>(key: string, change: (body: unknown) => { body: unknown | undefined; result: T }): Promise<T> {
    let outcome: { body: unknown | undefined; result: T } | undefined;
    try {
      this.db
        .transaction(() => {
          const row = this.statements.get.get(key);
          outcome = change(row ? this.parse(key, row.body) : undefined);
          if (outcome.body === undefined) return;
          const text = JSON.stringify(outcome.body);
          if (row) this.statements.update.run(text, key, row.version);
          else this.statements.insert.run(key, text);
        })
        .immediate();
    } catch (error) {
      if (error instanceof CorruptItemError) throw error;
      throw sqliteError(this.path, 'changing flow control', error);
    }
    return (outcome as { result: T }).result;
  }

  private parse(key: string, text: string): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CorruptItemError(`corrupt flow-control key ${key} in ${this.path}: ${(error as Error).message}`);
    }
  }

  async putFlow(key: string, body: unknown, version: number): Promise<boolean> {
    try {
      const text = JSON.stringify(body);
      const written = version === 0 ? this.statements.insert.run(key, text) : this.statements.update.run(text, key, version);
      return written.changes === 1;
    } catch (error) {
      throw sqliteError(this.path, 'writing flow control', error);
    }
  }
}
