import type Database from 'better-sqlite3';
import type { AdvanceCommit, RunStore, RunWriteCondition } from '../core/index.ts';
import {
  CorruptItemError,
  type IrVersionItem,
  IrVersionItemSchema,
  type NodeRecord,
  NodeRecordSchema,
  type RunEvent,
  RunEventSchema,
  type RunItem,
  RunItemSchema,
  StaleRunError,
  sameStoredValue,
} from '../core/index.ts';
import type * as z from '../core/zod.ts';
import { BUSY_TIMEOUT_MS, codeOf, openSqlite, type SqliteDatabase, sqliteError } from './sqlite-database.ts';

/** Days (today included) that `listRuns` without a workflow name looks back, as the DynamoDB store does. */
const LOOKBACK_DAYS = 31;
const DAY_MS = 86_400_000;

/**
 * The run store's tables. Each row keeps its item as JSON (`body`) beside the few columns that keys,
 * conditions and listings read, so an item round-trips exactly and a new field needs no migration.
 * `user_version` numbers the layout; a later layout migrates from it.
 */
const SCHEMA_VERSION = 2;
/** When a waiting run is due (waits/wait-model.ts `wakeAt`), as SQL over its body: the index below and its queries use it verbatim. */
const WAKE_AT = "COALESCE(json_extract(body, '$.wait.answer.at'), json_extract(body, '$.wait.until'))";
const IS_WAITING = "json_extract(body, '$.status') = 'waiting'";
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, workflow_name TEXT NOT NULL, created_at INTEGER NOT NULL,
    seq INTEGER NOT NULL, owner_id TEXT, body TEXT NOT NULL
  );
  CREATE INDEX IF NOT EXISTS runs_by_workflow ON runs (workflow_name, created_at DESC, run_id DESC);
  CREATE INDEX IF NOT EXISTS runs_by_time ON runs (created_at DESC, run_id DESC);
  CREATE TABLE IF NOT EXISTS ir_versions (
    run_id TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, version)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS steps (
    run_id TEXT NOT NULL, seq INTEGER NOT NULL, status TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS events (
    run_id TEXT NOT NULL, key TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (run_id, key)
  ) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS runs_waiting ON runs (${WAKE_AT}) WHERE ${IS_WAITING};
`;

type Row = { body: string };
type QueuedWrite = { operation: string; body: () => void; resolve: () => void; reject: (error: unknown) => void };

/** How soon a group of writes tries again for the write lock another connection holds (a commit holds it for about one fsync). */
const LOCK_RETRY_MS = 1;
type Statements = ReturnType<typeof prepare>;

const prepare = (db: Database.Database) => ({
  // Group commits (SqliteRunStore.write): the write lock without waiting, then the usual wait again.
  lockNoWait: db.prepare('PRAGMA busy_timeout = 0'),
  lockWait: db.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`),
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  getRun: db.prepare<[string], Row>('SELECT body FROM runs WHERE run_id = ?'),
  runGuard: db.prepare<[string], { seq: number; owner_id: string | null }>('SELECT seq, owner_id FROM runs WHERE run_id = ?'),
  // Only a takeover asks for it (start-once): it parses the body, so the per-step guard above does not.
  runEventSeq: db.prepare<[string], { event_seq: number | null }>("SELECT json_extract(body, '$.eventSeq') AS event_seq FROM runs WHERE run_id = ?"),
  putRun: db.prepare(
    `INSERT INTO runs (run_id, workflow_name, created_at, seq, owner_id, body) VALUES (@runId, @workflowName, @createdAt, @seq, @ownerId, @body)
     ON CONFLICT (run_id) DO UPDATE SET workflow_name = excluded.workflow_name, created_at = excluded.created_at,
       seq = excluded.seq, owner_id = excluded.owner_id, body = excluded.body`,
  ),
  getIr: db.prepare<[string, number], Row>('SELECT body FROM ir_versions WHERE run_id = ? AND version = ?'),
  insertIr: db.prepare('INSERT INTO ir_versions (run_id, version, body) VALUES (?, ?, ?)'),
  getStep: db.prepare<[string, number], Row & { status: string }>('SELECT body, status FROM steps WHERE run_id = ? AND seq = ?'),
  insertStep: db.prepare('INSERT INTO steps (run_id, seq, status, body) VALUES (?, ?, ?, ?)'),
  upsertStep: db.prepare('INSERT OR REPLACE INTO steps (run_id, seq, status, body) VALUES (?, ?, ?, ?)'),
  updateStep: db.prepare('UPDATE steps SET status = ?, body = ? WHERE run_id = ? AND seq = ? AND status = ?'),
  listRecords: db.prepare<[string, number], Row>('SELECT body FROM steps WHERE run_id = ? AND seq > ? ORDER BY seq'),
  putEvent: db.prepare('INSERT OR REPLACE INTO events (run_id, key, body) VALUES (?, ?, ?)'),
  listEvents: db.prepare<[string, string], Row>('SELECT body FROM events WHERE run_id = ? AND key > ? ORDER BY key'),
  runsByWorkflow: db.prepare<[string, number], Row>('SELECT body FROM runs WHERE workflow_name = ? ORDER BY created_at DESC, run_id DESC LIMIT ?'),
  // The partial index above holds only waiting runs: `serve` reads the due ones every tick without a scan.
  dueWaits: db.prepare<[number, number], Row>(`SELECT body FROM runs WHERE ${IS_WAITING} AND ${WAKE_AT} <= ? ORDER BY ${WAKE_AT} LIMIT ?`),
  waits: db.prepare<[number], Row>(`SELECT body FROM runs WHERE ${IS_WAITING} ORDER BY ${WAKE_AT} IS NULL, ${WAKE_AT} LIMIT ?`),
  recentRuns: db.prepare<[number, number, number], Row>(
    'SELECT body FROM runs WHERE created_at >= ? AND created_at < ? ORDER BY created_at DESC, run_id DESC LIMIT ?',
  ),
});

/** Milliseconds of the start of the UTC day of `epochMs`. */
const startOfDay = (epochMs: number): number => epochMs - (((epochMs % DAY_MS) + DAY_MS) % DAY_MS);

/**
 * RunStore on SQLite (better-sqlite3): WAL, `synchronous = FULL`, each write one transaction, so a
 * write that returned is on disk. Conditions are checked and applied inside one IMMEDIATE transaction,
 * which holds the database's write lock: processes sharing the file cannot interleave between them.
 */
export class SqliteRunStore implements RunStore {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly now: () => number;
  /** Writes waiting for the next group commit (see write). */
  private queued: QueuedWrite[] = [];
  /** The next try of a group whose lock another connection held. */
  private retry: NodeJS.Timeout | undefined;
  /** One write, inside the group's transaction: a savepoint. */
  private readonly savepoint: (body: () => void) => void;

  constructor(database: SqliteDatabase, options: { now?: () => number } = {}) {
    this.db = database.db;
    this.path = database.path;
    this.now = options.now ?? Date.now;
    this.sql = this.guard('preparing the run store', () => {
      if (Number(this.db.pragma('user_version', { simple: true })) < SCHEMA_VERSION) {
        this.db
          .transaction(() => {
            this.db.exec(SCHEMA);
            this.db.pragma(`user_version = ${SCHEMA_VERSION}`);
          })
          .immediate();
      }
      return prepare(this.db);
    });
    this.savepoint = this.db.transaction((body: () => void) => body());
  }

  /** Opens the store of a state dir (`<stateDir>/flowmend.db`). */
  static open(stateDir: string, options: { now?: () => number } = {}): SqliteRunStore {
    return new SqliteRunStore(openSqlite(stateDir), options);
  }

  close(): void {
    clearTimeout(this.retry);
    if (this.db.open) this.db.close();
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    return this.write('writing a run', () => this.putRunNow(run, condition));
  }

  async getRun(runId: string): Promise<RunItem | undefined> {
    const row = this.guard('reading a run', () => this.sql.getRun.get(runId));
    return row && this.parse(RunItemSchema, row, `run item of ${runId}`);
  }

  async putIrVersion(item: IrVersionItem): Promise<void> {
    return this.write('writing a workflow version', () => this.putIrVersionNow(item));
  }

  private putIrVersionNow(item: IrVersionItem): void {
    const existing = this.sql.getIr.get(item.runId, item.version);
    if (existing) {
      if (sameStoredValue(JSON.parse(existing.body), JSON.parse(JSON.stringify(item)))) return;
      throw new StaleRunError(`IR version ${item.version} of run ${item.runId} already exists with other content`, {
        details: { runId: item.runId, version: item.version },
      });
    }
    this.sql.insertIr.run(item.runId, item.version, JSON.stringify(item));
  }

  async getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    const row = this.guard('reading a workflow version', () => this.sql.getIr.get(runId, version));
    return row && this.parse(IrVersionItemSchema, row, `IR version ${version} of ${runId}`);
  }

  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    return this.write('writing a step', () => {
      const body = JSON.stringify(step);
      if (expectStatus === undefined) {
        this.sql.upsertStep.run(step.runId, step.seq, step.status, body);
        return;
      }
      const changed =
        expectStatus === null
          ? this.sql.getStep.get(step.runId, step.seq) === undefined && this.sql.insertStep.run(step.runId, step.seq, step.status, body).changes > 0
          : this.sql.updateStep.run(step.status, body, step.runId, step.seq, expectStatus).changes > 0;
      if (changed) return;
      const current = this.sql.getStep.get(step.runId, step.seq);
      const found = current ? `is ${current.status}` : 'does not exist';
      throw new StaleRunError(`step ${step.seq} of run ${step.runId} ${found}, expected ${expectStatus ?? 'absent'}`, {
        details: { runId: step.runId, seq: step.seq, status: current?.status },
      });
    });
  }

  async putRecords(steps: readonly NodeRecord[]): Promise<void> {
    if (steps.length === 0) return;
    return this.write('writing steps', () => this.putRecordsNow(steps));
  }

  async getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    const rows = this.guard('reading steps', () => [...new Set(seqs)].flatMap((seq) => this.sql.getStep.get(runId, seq) ?? []));
    return rows.map((row) => this.parse(NodeRecordSchema, row, `a step of ${runId}`));
  }

  async listRecords(runId: string, afterSeq = 0): Promise<NodeRecord[]> {
    const rows = this.guard('listing steps', () => this.sql.listRecords.all(runId, afterSeq));
    return rows.map((row) => this.parse(NodeRecordSchema, row, `a step of ${runId}`));
  }

  async appendEvents(events: readonly RunEvent[]): Promise<void> {
    if (events.length === 0) return;
    return this.write('appending events', () => this.appendEventsNow(events));
  }

  async listEvents(runId: string, afterKey?: string): Promise<RunEvent[]> {
    const rows = this.guard('listing events', () => this.sql.listEvents.all(runId, afterKey ?? ''));
    return rows.map((row) => this.parse(RunEventSchema, row, `an event of ${runId}`));
  }

  async listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]> {
    const limit = Math.max(0, options.limit);
    const rows = this.guard('listing runs', () => {
      if (options.workflowName !== undefined) return this.sql.runsByWorkflow.all(options.workflowName, limit);
      const today = startOfDay(this.now());
      return this.sql.recentRuns.all(today - (LOOKBACK_DAYS - 1) * DAY_MS, today + DAY_MS, limit);
    });
    return rows.map((row) => this.parse(RunItemSchema, row, 'a run item'));
  }

  async listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]> {
    const limit = Math.max(0, options.limit);
    const rows = this.guard('listing waiting runs', () =>
      options.dueBy === undefined ? this.sql.waits.all(limit) : this.sql.dueWaits.all(options.dueBy, limit),
    );
    return rows.map((row) => this.parse(RunItemSchema, row, 'a run item'));
  }

  /** One transaction, so one fsync: the workflow versions, the events, the records and the run item are on disk together, or none is. */
  async commitAdvance(commit: AdvanceCommit): Promise<void> {
    return this.write('committing a step', () => {
      for (const item of commit.irVersions ?? []) this.putIrVersionNow(item);
      this.putRunNow(commit.run, commit.condition);
      this.appendEventsNow(commit.events);
      this.putRecordsNow(commit.records);
    });
  }

  private putRunNow(run: RunItem, condition: RunWriteCondition): void {
    const current = this.sql.runGuard.get(run.runId);
    const failed: string[] = [];
    if (condition.notExists && current) failed.push('it already exists');
    if (condition.ownerId !== undefined && current?.owner_id !== condition.ownerId) failed.push(`its owner is not ${condition.ownerId}`);
    if (condition.seq !== undefined && current?.seq !== condition.seq) failed.push(`its seq is not ${condition.seq}`);
    if (condition.eventSeq !== undefined && (current === undefined || (this.sql.runEventSeq.get(run.runId)?.event_seq ?? 0) !== condition.eventSeq)) {
      failed.push(`its eventSeq is not ${condition.eventSeq}`);
    }
    if (failed.length > 0) {
      throw new StaleRunError(`run ${run.runId} was moved on by another writer (${failed.join(', ')})`, { details: { runId: run.runId, ...condition } });
    }
    this.sql.putRun.run({
      runId: run.runId,
      workflowName: run.workflowName,
      createdAt: run.createdAt,
      seq: run.seq,
      ownerId: run.owner?.id ?? null,
      body: JSON.stringify(run),
    });
  }

  private putRecordsNow(steps: readonly NodeRecord[]): void {
    for (const step of steps) this.sql.upsertStep.run(step.runId, step.seq, step.status, JSON.stringify(step));
  }

  private appendEventsNow(events: readonly RunEvent[]): void {
    for (const event of events) this.sql.putEvent.run(event.runId, event.key, JSON.stringify(event));
  }

  /**
   * Runs `body` in an IMMEDIATE transaction, shared with the other writes made in the same turn of the event
   * loop (group commit): `serve` drives many runs at once, and their steps then cost one fsync together
   * instead of one each. Each write is a savepoint of its own, so a failed condition (or any error) undoes
   * only that write; the promise resolves once the transaction holding it is on disk, so a run still moves
   * on only after its step is durable. A lone write waits one turn of the loop. While another connection
   * holds the write lock, the group waits without blocking this thread's event loop (serve's API stays
   * responsive, and more writes join the group), up to BUSY_TIMEOUT_MS.
   */
  private write(operation: string, body: () => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ operation, body, resolve, reject });
      if (this.queued.length === 1 && this.retry === undefined) setImmediate(() => this.flush(Date.now()));
    });
  }

  private flush(since: number): void {
    this.retry = undefined;
    const batch = this.queued;
    if (batch.length === 0) return;
    const operation = batch.length === 1 ? (batch[0] as QueuedWrite).operation : `${batch.length} writes`;
    try {
      if (!this.begin()) {
        if (Date.now() - since < BUSY_TIMEOUT_MS) {
          this.retry = setTimeout(() => this.flush(since), LOCK_RETRY_MS);
          return;
        }
        this.db.exec('BEGIN IMMEDIATE'); // a last try that waits out the busy timeout, else fails with SQLITE_BUSY (named below)
      }
    } catch (error) {
      this.queued = [];
      for (const entry of batch) entry.reject(sqliteError(this.path, operation, error));
      return;
    }
    this.queued = [];
    const failed = new Map<QueuedWrite, unknown>();
    for (const entry of batch) {
      try {
        this.savepoint(entry.body);
      } catch (error) {
        failed.set(entry, error instanceof StaleRunError ? error : sqliteError(this.path, entry.operation, error));
      }
    }
    try {
      this.sql.commit.run();
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const entry of batch) entry.reject(sqliteError(this.path, operation, error));
      return;
    }
    for (const entry of batch) {
      if (failed.has(entry)) entry.reject(failed.get(entry));
      else entry.resolve();
    }
  }

  /** Takes the write lock if no other connection holds it (false when one does), without waiting. */
  private begin(): boolean {
    this.sql.lockNoWait.get();
    try {
      this.sql.begin.run();
      return true;
    } catch (error) {
      if (codeOf(error) === 'SQLITE_BUSY') return false;
      throw error;
    } finally {
      this.sql.lockWait.get();
    }
  }

  private guard<T>(operation: string, body: () => T): T {
    try {
      return body();
    } catch (error) {
      if (error instanceof StaleRunError) throw error;
      throw sqliteError(this.path, operation, error);
    }
  }

  private parse<S extends z.ZodMiniType>(schema: S, row: Row, what: string): z.infer<S> {
    let value: unknown;
    try {
      value = JSON.parse(row.body);
    } catch (error) {
      throw new CorruptItemError(`corrupt ${what} in ${this.path}: not JSON`, { cause: error });
    }
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new CorruptItemError(`corrupt ${what} in ${this.path}: ${issues.join('; ')}`, { cause: parsed.error });
  }
}
