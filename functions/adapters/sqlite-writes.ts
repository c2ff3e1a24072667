import type Database from 'better-sqlite3';
import {
  CorruptItemError,
  type NodeRecord,
  type RunWriteCondition,
  StaleRunError,
  type StoreError,
  StoreUnavailableError,
  sameStoredValue,
} from '../core/index.ts';
import { BUSY_TIMEOUT_MS, codeOf, sqliteError } from './sqlite-database.ts';

/**
 * The run store's writes as data: what SqliteRunStore asks for, applied by a GroupCommit on its own
 * connection or on the writer thread's (sqlite-writer-thread.ts). Bodies are the items' JSON, made by the
 * caller, so a write crosses a thread as a few strings.
 */
export type WriteOp =
  | {
      op: 'run';
      runId: string;
      workflowName: string;
      createdAt: number;
      seq: number;
      ownerId: string | null;
      /** The item without its path maps, which go to `run_paths` (sqlite-run-schema.ts). */
      body: string;
      condition: RunWriteCondition;
      /** Names this write of the item's maps: the rows below, applied, are its maps. */
      pathRev: string;
      /** The rows are changes over those of the write this names (else the whole maps, the old rows deleted). */
      pathBase: string | null;
      path: readonly PathRow[];
    }
  | { op: 'ir'; runId: string; version: number; body: string }
  /** `expect`: the status the record must have (null: it must not exist); absent, the record is written whatever is there. */
  | { op: 'record'; runId: string; seq: number; status: NodeRecord['status']; body: string; expect?: NodeRecord['status'] | null }
  | { op: 'event'; runId: string; key: string; body: string };

/** A node's entries in a run item's path maps: `[nodeId, latest, visits]` (null where the map has none; both null: the row goes). */
export type PathRow = readonly [string, number | null, number | null];

/**
 * The rows of a run's path maps are not those the write's changes apply to (another connection wrote the
 * run since, or an earlier write failed): the store writes the maps whole instead. Never reaches the engine.
 */
export class PathBaseError extends Error {
  override name = 'PathBaseError';
}

/** Where a store's writes go: a GroupCommit in this thread, or the writer thread. */
export interface SqliteWriter {
  /** Applies `ops` together (all or none), and resolves once they are on disk. */
  submit(operation: string, ops: readonly WriteOp[]): Promise<void>;
  close(): void;
}

/** How soon a group of writes tries again for the write lock another connection holds (a commit holds it for about one fsync). */
const LOCK_RETRY_MS = 1;

type QueuedWrite = { operation: string; ops: readonly WriteOp[]; resolve: () => void; reject: (error: unknown) => void };

const prepare = (db: Database.Database) => ({
  // The write lock without waiting, then the usual wait again.
  lockNoWait: db.prepare('PRAGMA busy_timeout = 0'),
  lockWait: db.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`),
  begin: db.prepare('BEGIN IMMEDIATE'),
  commit: db.prepare('COMMIT'),
  runGuard: db.prepare<[string], { seq: number; owner_id: string | null; path_rev: string | null }>(
    'SELECT seq, owner_id, path_rev FROM runs WHERE run_id = ?',
  ),
  // Only a takeover asks for it (start-once): it parses the body, so the per-step guard above does not.
  runEventSeq: db.prepare<[string], { event_seq: number | null }>("SELECT json_extract(body, '$.eventSeq') AS event_seq FROM runs WHERE run_id = ?"),
  insertRun: db.prepare(
    'INSERT INTO runs (run_id, workflow_name, created_at, seq, owner_id, body, path_rev) VALUES (@runId, @workflowName, @createdAt, @seq, @ownerId, @body, @pathRev)',
  ),
  // A run's workflow name and creation time never change: an update leaves them, and the two indexes on them, alone.
  updateRun: db.prepare('UPDATE runs SET seq = @seq, owner_id = @ownerId, body = @body, path_rev = @pathRev WHERE run_id = @runId'),
  clearPath: db.prepare('DELETE FROM run_paths WHERE run_id = ?'),
  putPath: db.prepare('INSERT OR REPLACE INTO run_paths (run_id, node_id, latest, visits) VALUES (?, ?, ?, ?)'),
  dropPath: db.prepare('DELETE FROM run_paths WHERE run_id = ? AND node_id = ?'),
  getIr: db.prepare<[string, number], { body: string }>('SELECT body FROM ir_versions WHERE run_id = ? AND version = ?'),
  insertIr: db.prepare('INSERT INTO ir_versions (run_id, version, body) VALUES (?, ?, ?)'),
  getStep: db.prepare<[string, number], { status: string }>('SELECT status FROM steps WHERE run_id = ? AND seq = ?'),
  insertStep: db.prepare('INSERT INTO steps (run_id, seq, status, body) VALUES (?, ?, ?, ?)'),
  upsertStep: db.prepare('INSERT OR REPLACE INTO steps (run_id, seq, status, body) VALUES (?, ?, ?, ?)'),
  updateStep: db.prepare('UPDATE steps SET status = ?, body = ? WHERE run_id = ? AND seq = ? AND status = ?'),
  putEvent: db.prepare('INSERT OR REPLACE INTO events (run_id, key, body) VALUES (?, ?, ?)'),
});

/**
 * Writes on one connection, in IMMEDIATE transactions shared by the writes submitted in the same turn of the
 * event loop (group commit): `serve` drives many runs at once, and their steps then cost one fsync together
 * instead of one each. Each write is a savepoint of its own, so a failed condition (or any error) undoes
 * only that write; its promise resolves once the transaction holding it is on disk, so a run moves on only
 * after its step is durable. A lone write waits one turn of the loop. While another connection holds the
 * write lock, the group waits without blocking this thread's event loop (more writes join it), up to
 * BUSY_TIMEOUT_MS. Conditions are checked inside the transaction, which holds the database's write lock:
 * connections sharing the file cannot interleave between a check and its write.
 */
export class GroupCommit implements SqliteWriter {
  private readonly sql: ReturnType<typeof prepare>;
  private readonly savepoint: (ops: readonly WriteOp[]) => void;
  private queued: QueuedWrite[] = [];
  /** The next try of a group whose lock another connection held. */
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly path: string,
  ) {
    this.sql = prepare(db);
    this.savepoint = db.transaction((ops: readonly WriteOp[]) => {
      for (const op of ops) this.apply(op);
    });
  }

  submit(operation: string, ops: readonly WriteOp[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queued.push({ operation, ops, resolve, reject });
      if (this.queued.length === 1 && this.retry === undefined) setImmediate(() => this.flush(Date.now()));
    });
  }

  close(): void {
    clearTimeout(this.retry);
  }

  private apply(op: WriteOp): void {
    if (op.op === 'run') this.putRun(op);
    else if (op.op === 'ir') this.putIr(op);
    else if (op.op === 'record') this.putRecord(op);
    else this.sql.putEvent.run(op.runId, op.key, op.body);
  }

  private putRun(op: Extract<WriteOp, { op: 'run' }>): void {
    const { condition } = op;
    const current = this.sql.runGuard.get(op.runId);
    const failed: string[] = [];
    if (condition.notExists && current) failed.push('it already exists');
    if (condition.ownerId !== undefined && current?.owner_id !== condition.ownerId) failed.push(`its owner is not ${condition.ownerId}`);
    if (condition.seq !== undefined && current?.seq !== condition.seq) failed.push(`its seq is not ${condition.seq}`);
    if (condition.eventSeq !== undefined && (current === undefined || (this.sql.runEventSeq.get(op.runId)?.event_seq ?? 0) !== condition.eventSeq)) {
      failed.push(`its eventSeq is not ${condition.eventSeq}`);
    }
    if (failed.length > 0) {
      throw new StaleRunError(`run ${op.runId} was moved on by another writer (${failed.join(', ')})`, { details: { runId: op.runId, ...condition } });
    }
    if (op.pathBase !== null && current?.path_rev !== op.pathBase) {
      throw new PathBaseError(`the path rows of run ${op.runId} are not those of write ${op.pathBase}`);
    }
    if (op.pathBase === null) this.sql.clearPath.run(op.runId);
    for (const [nodeId, latest, visits] of op.path) {
      if (latest === null && visits === null) this.sql.dropPath.run(op.runId, nodeId);
      else this.sql.putPath.run(op.runId, nodeId, latest, visits);
    }
    const { runId, workflowName, createdAt, seq, ownerId, body, pathRev } = op;
    if (current) this.sql.updateRun.run({ runId, seq, ownerId, body, pathRev });
    else this.sql.insertRun.run({ runId, workflowName, createdAt, seq, ownerId, body, pathRev });
  }

  private putIr(op: Extract<WriteOp, { op: 'ir' }>): void {
    const existing = this.sql.getIr.get(op.runId, op.version);
    if (existing) {
      if (sameStoredValue(JSON.parse(existing.body), JSON.parse(op.body))) return;
      throw new StaleRunError(`IR version ${op.version} of run ${op.runId} already exists with other content`, {
        details: { runId: op.runId, version: op.version },
      });
    }
    this.sql.insertIr.run(op.runId, op.version, op.body);
  }

  private putRecord(op: Extract<WriteOp, { op: 'record' }>): void {
    const { runId, seq, status, body, expect } = op;
    if (expect === undefined) {
      this.sql.upsertStep.run(runId, seq, status, body);
      return;
    }
    const changed =
      expect === null
        ? this.sql.getStep.get(runId, seq) === undefined && this.sql.insertStep.run(runId, seq, status, body).changes > 0
        : this.sql.updateStep.run(status, body, runId, seq, expect).changes > 0;
    if (changed) return;
    const current = this.sql.getStep.get(runId, seq);
    const found = current ? `is ${current.status}` : 'does not exist';
    throw new StaleRunError(`step ${seq} of run ${runId} ${found}, expected ${expect ?? 'absent'}`, { details: { runId, seq, status: current?.status } });
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
        this.savepoint(entry.ops);
      } catch (error) {
        failed.set(entry, error instanceof StaleRunError || error instanceof PathBaseError ? error : sqliteError(this.path, entry.operation, error));
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
}

/** A write's failure as it crosses a thread: the error's kind, message and details (never a stack). */
export interface WriteFailure {
  kind: 'stale' | 'corrupt' | 'unavailable' | 'path';
  message: string;
  details?: Record<string, unknown>;
}

export const failureOf = (error: unknown): WriteFailure => {
  const message = error instanceof Error ? error.message : String(error);
  const details = (error as { details?: Record<string, unknown> } | undefined)?.details;
  const kind =
    error instanceof StaleRunError ? 'stale' : error instanceof CorruptItemError ? 'corrupt' : error instanceof PathBaseError ? 'path' : 'unavailable';
  return { kind, message, ...(details === undefined ? {} : { details }) };
};

/** The error a write failed with on the writer thread, as its own class again (the engine tells a stale write from an outage by class). */
export const errorOf = (failure: WriteFailure): StaleRunError | StoreError | PathBaseError => {
  if (failure.kind === 'path') return new PathBaseError(failure.message);
  const options = failure.details === undefined ? {} : { details: failure.details };
  if (failure.kind === 'stale') return new StaleRunError(failure.message, options);
  if (failure.kind === 'corrupt') return new CorruptItemError(failure.message, options);
  return new StoreUnavailableError(failure.message, options);
};
