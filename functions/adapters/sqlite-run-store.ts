import type { MessagePort } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { AdvanceCommit, RunStore, RunWriteCondition } from '../core/index.ts';
import {
  CorruptItemError,
  forgetPathChanges,
  type IrVersionItem,
  IrVersionItemSchema,
  type NodeRecord,
  NodeRecordSchema,
  pathReadAt,
  type RunEvent,
  RunEventSchema,
  type RunItem,
  RunItemSchema,
  StaleRunError,
  takePathChanges,
} from '../core/index.ts';
import type * as z from '../core/zod.ts';
import { openSqlite, type SqliteDatabase, sqliteError } from './sqlite-database.ts';
import { ensureRunSchema, IS_WAITING, WAKE_AT } from './sqlite-run-schema.ts';
import { ThreadWriter } from './sqlite-writer-client.ts';
import { GroupCommit, PathBaseError, type PathRow, type SqliteWriter, type WriteOp } from './sqlite-writes.ts';

/** Days (today included) that `listRuns` without a workflow name looks back, as the DynamoDB store does. */
const LOOKBACK_DAYS = 31;
const DAY_MS = 86_400_000;

type Row = { body: string };
type PathRowOut = { node_id: string; latest: number | null; visits: number | null };

type Statements = ReturnType<typeof prepare>;

const prepare = (db: Database.Database) => ({
  getRun: db.prepare<[string], Row & { path_rev: string | null }>('SELECT body, path_rev FROM runs WHERE run_id = ?'),
  // In key order, not by seq: no reader depends on the maps' key order (those that need seq order sort), and the sort doubled a long run's read.
  getPath: db.prepare<[string], PathRowOut>('SELECT node_id, latest, visits FROM run_paths WHERE run_id = ?'),
  getIr: db.prepare<[string, number], Row>('SELECT body FROM ir_versions WHERE run_id = ? AND version = ?'),
  getStep: db.prepare<[string, number], Row & { status: string }>('SELECT body, status FROM steps WHERE run_id = ? AND seq = ?'),
  listRecords: db.prepare<[string, number], Row>('SELECT body FROM steps WHERE run_id = ? AND seq > ? ORDER BY seq'),
  listEvents: db.prepare<[string, string], Row>('SELECT body FROM events WHERE run_id = ? AND key > ? ORDER BY key'),
  runsByWorkflow: db.prepare<[string, number], Row>('SELECT body FROM runs WHERE workflow_name = ? ORDER BY created_at DESC, run_id DESC LIMIT ?'),
  // The partial index above holds only waiting runs: `serve` reads the due ones every tick without a scan.
  dueWaits: db.prepare<[number, number], Row>(`SELECT body FROM runs WHERE ${IS_WAITING} AND ${WAKE_AT} <= ? ORDER BY ${WAKE_AT} LIMIT ?`),
  waits: db.prepare<[number], Row>(`SELECT body FROM runs WHERE ${IS_WAITING} ORDER BY ${WAKE_AT} IS NULL, ${WAKE_AT} LIMIT ?`),
  recentRuns: db.prepare<[number, number, number], Row>(
    'SELECT body FROM runs WHERE created_at >= ? AND created_at < ? ORDER BY created_at DESC, run_id DESC LIMIT ?',
  ),
  unfinishedOwned: db.prepare<[string], Row>(
    "SELECT body FROM runs WHERE owner_id GLOB ? AND json_extract(body, '$.status') IN ('running', 'interrupted') ORDER BY created_at, rowid",
  ),
});

export interface SqliteRunStoreOptions {
  now?: () => number;
  /**
   * A port to serve's writer thread (sqlite-writer-thread.ts): writes made together go there, reads stay on
   * this connection. A write made alone is committed on this connection (see ThreadWriter).
   */
  writerPort?: MessagePort | undefined;
  /** Every write to the writer thread, one made alone too (tests of the thread's own path). */
  everyWriteToWriter?: boolean;
}

const pathRow = (run: RunItem, nodeId: string): PathRow => [nodeId, run.latest[nodeId] ?? null, run.visits[nodeId] ?? null];

/** Names each write of path rows (`path_rev`), unique across processes: a write's changes apply over the rows of the write they follow. */
const PATH_TOKENS = `${Date.now().toString(36)}.${Math.random().toString(36).slice(2, 10)}`;
let pathWrites = 0;

/** The run item without its path maps, and of those the entries changed since this object's last write (all of them when unknown). */
const runOp = (run: RunItem, condition: RunWriteCondition): WriteOp => {
  pathWrites += 1;
  const pathRev = `${PATH_TOKENS}.${pathWrites}`;
  const changes = takePathChanges(run, pathRev);
  const { latest, visits, ...rest } = run;
  const path = changes
    ? changes.changed.map((nodeId) => pathRow(run, nodeId))
    : [...new Set([...Object.keys(latest), ...Object.keys(visits)])].map((nodeId) => pathRow(run, nodeId));
  return {
    op: 'run',
    runId: run.runId,
    workflowName: run.workflowName,
    createdAt: run.createdAt,
    seq: run.seq,
    ownerId: run.owner?.id ?? null,
    body: JSON.stringify(rest),
    condition,
    pathRev,
    pathBase: changes?.base ?? null,
    path,
  };
};
const irOp = (item: IrVersionItem): WriteOp => ({ op: 'ir', runId: item.runId, version: item.version, body: JSON.stringify(item) });
const recordOp = (step: NodeRecord): Extract<WriteOp, { op: 'record' }> => ({
  op: 'record',
  runId: step.runId,
  seq: step.seq,
  status: step.status,
  body: JSON.stringify(step),
});
const eventOp = (event: RunEvent): WriteOp => ({ op: 'event', runId: event.runId, key: event.key, body: JSON.stringify(event) });

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
  /** Where writes go: a group commit on this connection, or serve's writer thread (sqlite-writer-thread.ts). */
  private readonly writer: SqliteWriter;

  constructor(database: SqliteDatabase, options: SqliteRunStoreOptions = {}) {
    this.db = database.db;
    this.path = database.path;
    this.now = options.now ?? Date.now;
    this.sql = this.guard('preparing the run store', () => {
      ensureRunSchema(this.db);
      return prepare(this.db);
    });
    const local = () => new GroupCommit(this.db, this.path);
    this.writer =
      options.writerPort === undefined
        ? local()
        : new ThreadWriter(options.writerPort, this.path, local, { aloneOnOwnConnection: !options.everyWriteToWriter });
  }

  /** Opens the store of a state dir (`<stateDir>/flowmend.db`). */
  static open(stateDir: string, options: SqliteRunStoreOptions = {}): SqliteRunStore {
    return new SqliteRunStore(openSqlite(stateDir), options);
  }

  close(): void {
    this.writer.close();
    if (this.db.open) this.db.close();
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    return this.submitRun('writing a run', run, () => [runOp(run, condition)]);
  }

  async getRun(runId: string): Promise<RunItem | undefined> {
    // The run's row and its path rows in one read transaction: both of one write, never the row of one write
    // and the paths of the next (another connection may commit between two statements).
    return this.reading(() => {
      const row = this.guard('reading a run', () => this.sql.getRun.get(runId));
      return row && this.parseRun(row, `run item of ${runId}`);
    });
  }

  async putIrVersion(item: IrVersionItem): Promise<void> {
    return this.writer.submit('writing a workflow version', [irOp(item)]);
  }

  async getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    const row = this.guard('reading a workflow version', () => this.sql.getIr.get(runId, version));
    return row && this.parse(IrVersionItemSchema, row, `IR version ${version} of ${runId}`);
  }

  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    return this.writer.submit('writing a step', [{ ...recordOp(step), ...(expectStatus === undefined ? {} : { expect: expectStatus }) }]);
  }

  async putRecords(steps: readonly NodeRecord[]): Promise<void> {
    if (steps.length === 0) return;
    return this.writer.submit('writing steps', steps.map(recordOp));
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
    return this.writer.submit('appending events', events.map(eventOp));
  }

  async listEvents(runId: string, afterKey?: string): Promise<RunEvent[]> {
    const rows = this.guard('listing events', () => this.sql.listEvents.all(runId, afterKey ?? ''));
    return rows.map((row) => this.parse(RunEventSchema, row, `an event of ${runId}`));
  }

  async listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]> {
    const limit = Math.max(0, options.limit);
    return this.reading(() => {
      const rows = this.guard('listing runs', () => {
        if (options.workflowName !== undefined) return this.sql.runsByWorkflow.all(options.workflowName, limit);
        const today = startOfDay(this.now());
        return this.sql.recentRuns.all(today - (LOOKBACK_DAYS - 1) * DAY_MS, today + DAY_MS, limit);
      });
      return rows.map((row) => this.parseRun(row, 'a run item'));
    });
  }

  /**
   * Every run not finished (`running` or `interrupted`) whose owner's id starts with `ownerPrefix` (no glob
   * characters), oldest first: all of them, not a window of recent runs (a serve's recovery, which must leave
   * none of its runs behind however long its line of waiting runs was).
   */
  async listUnfinishedOwned(ownerPrefix: string): Promise<RunItem[]> {
    return this.reading(() => {
      const rows = this.guard('listing unfinished runs', () => this.sql.unfinishedOwned.all(`${ownerPrefix}*`));
      return rows.map((row) => this.parseRun(row, 'a run item'));
    });
  }

  async listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]> {
    const limit = Math.max(0, options.limit);
    return this.reading(() => {
      const rows = this.guard('listing waiting runs', () =>
        options.dueBy === undefined ? this.sql.waits.all(limit) : this.sql.dueWaits.all(options.dueBy, limit),
      );
      return rows.map((row) => this.parseRun(row, 'a run item'));
    });
  }

  /** One transaction, so one fsync: the workflow versions, the events, the records and the run item are on disk together, or none is. */
  async commitAdvance(commit: AdvanceCommit): Promise<void> {
    return this.submitRun('committing a step', commit.run, () => [
      ...(commit.irVersions ?? []).map(irOp),
      runOp(commit.run, commit.condition),
      ...commit.events.map(eventOp),
      ...commit.records.map(recordOp),
    ]);
  }

  /**
   * Writes that carry `run`: its path maps go as the entries changed since its last write, over the rows
   * that write left. When the rows are not those (another connection wrote the run, or a write failed),
   * the writes go again with the maps whole; after any failure the next write of `run` is whole too.
   */
  private async submitRun(operation: string, run: RunItem, ops: () => WriteOp[]): Promise<void> {
    try {
      await this.writer.submit(operation, ops());
    } catch (error) {
      forgetPathChanges(run);
      if (!(error instanceof PathBaseError)) throw error;
      try {
        await this.writer.submit(operation, ops());
      } catch (again) {
        forgetPathChanges(run);
        throw again;
      }
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

  /** A run item with its path maps: from its rows, or from its body when a layout-2 write left them there. */
  private parseRun(row: Row & { path_rev?: string | null }, what: string): RunItem {
    const value = this.json(row, what);
    let fromRows = false;
    if (value !== null && typeof value === 'object' && !('latest' in value) && typeof (value as { runId?: unknown }).runId === 'string') {
      const runId = (value as { runId: string }).runId;
      const seqs: Record<string, number> = {};
      const counts: Record<string, number> = {};
      for (const entry of this.guard('reading a run', () => this.sql.getPath.all(runId))) {
        if (entry.latest !== null) seqs[entry.node_id] = entry.latest;
        if (entry.visits !== null) counts[entry.node_id] = entry.visits;
      }
      Object.assign(value, { latest: seqs, visits: counts });
      fromRows = true;
    }
    const run = this.check(RunItemSchema, value, what);
    // Read with its row's path_rev (getRun): a write of the item can carry its changes over these rows.
    if (fromRows && typeof row.path_rev === 'string') pathReadAt(run, row.path_rev);
    return run;
  }

  /** Runs reads in one read transaction (one snapshot of the database), or inside the transaction already open. */
  private reading<T>(read: () => T): T {
    return this.db.inTransaction ? read() : this.db.transaction(read)();
  }

  private parse<S extends z.ZodMiniType>(schema: S, row: Row, what: string): z.infer<S> {
    return this.check(schema, this.json(row, what), what);
  }

  private json(row: Row, what: string): unknown {
    try {
      return JSON.parse(row.body);
    } catch (error) {
      throw new CorruptItemError(`corrupt ${what} in ${this.path}: not JSON`, { cause: error });
    }
  }

  private check<S extends z.ZodMiniType>(schema: S, value: unknown, what: string): z.infer<S> {
    const parsed = schema.safeParse(value);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new CorruptItemError(`corrupt ${what} in ${this.path}: ${issues.join('; ')}`, { cause: parsed.error });
  }
}
