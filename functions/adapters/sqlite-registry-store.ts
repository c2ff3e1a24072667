import type Database from 'better-sqlite3';
import type { IdempotencyClaim, RegistryStore, Workflow } from '../core/index.ts';
import {
  type IdempotencyRecord,
  type Schedule,
  ScheduleSchema,
  StoreUnavailableError,
  type WorkflowSummary,
  type WorkflowVersion,
  WorkflowVersionSchema,
} from '../core/index.ts';
import { openSqlite } from './sqlite-database.ts';

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS registry_workflows (
    name TEXT NOT NULL, version INTEGER NOT NULL, body TEXT NOT NULL, created_at INTEGER NOT NULL,
    PRIMARY KEY (name, version)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS registry_schedules (workflow_name TEXT PRIMARY KEY, body TEXT NOT NULL) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS registry_idempotency (
    key TEXT PRIMARY KEY, run_id TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
`;

/** Opens `<stateDir>/flowmend.db` (the run store's database) for the registry's own tables. */
export const openRegistryDatabase = (stateDir: string): Database.Database => openSqlite(stateDir).db;

interface WorkflowRow {
  body: string;
}

/**
 * RegistryStore on SQLite: its own tables in the state dir's database. Every write is one statement or
 * one IMMEDIATE transaction, so two `serve` processes on one state dir cannot both win a key or a version.
 */
export class SqliteRegistryStore implements RegistryStore {
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    this.statements = {
      latest: db.prepare<[string], WorkflowRow>('SELECT body FROM registry_workflows WHERE name = ? ORDER BY version DESC LIMIT 1'),
      version: db.prepare<[string, number], WorkflowRow>('SELECT body FROM registry_workflows WHERE name = ? AND version = ?'),
      maxVersion: db.prepare<[string], { v: number | null }>('SELECT MAX(version) AS v FROM registry_workflows WHERE name = ?'),
      insertVersion: db.prepare('INSERT INTO registry_workflows (name, version, body, created_at) VALUES (?, ?, ?, ?)'),
      latestOfEach: db.prepare<[], WorkflowRow>(
        'SELECT w.body FROM registry_workflows w JOIN (SELECT name, MAX(version) AS v FROM registry_workflows GROUP BY name) m ON w.name = m.name AND w.version = m.v ORDER BY w.name',
      ),
      deleteVersions: db.prepare('DELETE FROM registry_workflows WHERE name = ?'),
      putSchedule: db.prepare(
        'INSERT INTO registry_schedules (workflow_name, body) VALUES (?, ?) ON CONFLICT (workflow_name) DO UPDATE SET body = excluded.body',
      ),
      getSchedule: db.prepare<[string], WorkflowRow>('SELECT body FROM registry_schedules WHERE workflow_name = ?'),
      listSchedules: db.prepare<[], WorkflowRow>('SELECT body FROM registry_schedules ORDER BY workflow_name'),
      deleteSchedule: db.prepare('DELETE FROM registry_schedules WHERE workflow_name = ?'),
      // The insert wins over nothing or over an expired record; a live record leaves the row untouched.
      claimKey: db.prepare(
        `INSERT INTO registry_idempotency (key, run_id, created_at, expires_at) VALUES (@key, @runId, @createdAt, @expiresAt)
         ON CONFLICT (key) DO UPDATE SET run_id = excluded.run_id, created_at = excluded.created_at, expires_at = excluded.expires_at
         WHERE registry_idempotency.expires_at <= @now`,
      ),
      getKey: db.prepare<[string], { run_id: string }>('SELECT run_id FROM registry_idempotency WHERE key = ?'),
      purgeKeys: db.prepare('DELETE FROM registry_idempotency WHERE expires_at <= ?'),
    };
  }

  async putWorkflow(name: string, workflow: Workflow, now: number): Promise<WorkflowVersion> {
    const insert = this.db.transaction((): WorkflowVersion => {
      const version = (this.statements.maxVersion.get(name)?.v ?? 0) + 1;
      const item: WorkflowVersion = { name, version, workflow, createdAt: now };
      this.statements.insertVersion.run(name, version, JSON.stringify(item), now);
      return item;
    });
    return insert.immediate();
  }

  async getWorkflow(name: string, version?: number): Promise<WorkflowVersion | undefined> {
    const row = version === undefined ? this.statements.latest.get(name) : this.statements.version.get(name, version);
    return row && WorkflowVersionSchema.parse(JSON.parse(row.body));
  }

  async listWorkflows(): Promise<WorkflowSummary[]> {
    return this.statements.latestOfEach.all().map((row) => {
      const v = WorkflowVersionSchema.parse(JSON.parse(row.body));
      return { name: v.name, latestVersion: v.version, updatedAt: v.createdAt, ...(v.workflow.description ? { description: v.workflow.description } : {}) };
    });
  }

  async deleteWorkflow(name: string): Promise<boolean> {
    const remove = this.db.transaction(() => {
      this.statements.deleteSchedule.run(name);
      return this.statements.deleteVersions.run(name).changes > 0;
    });
    return remove.immediate();
  }

  async putSchedule(schedule: Schedule): Promise<void> {
    this.statements.putSchedule.run(schedule.workflowName, JSON.stringify(schedule));
  }

  async getSchedule(workflowName: string): Promise<Schedule | undefined> {
    const row = this.statements.getSchedule.get(workflowName);
    return row && ScheduleSchema.parse(JSON.parse(row.body));
  }

  async listSchedules(): Promise<Schedule[]> {
    return this.statements.listSchedules.all().map((row) => ScheduleSchema.parse(JSON.parse(row.body)));
  }

  async deleteSchedule(workflowName: string): Promise<boolean> {
    return this.statements.deleteSchedule.run(workflowName).changes > 0;
  }

  async claimIdempotencyKey(record: IdempotencyRecord, now: number): Promise<IdempotencyClaim> {
    const claim = this.db.transaction((): IdempotencyClaim => {
      if (this.statements.claimKey.run({ ...record, now }).changes > 0) return { claimed: true };
      const row = this.statements.getKey.get(record.key);
      if (!row) throw new StoreUnavailableError(`idempotency key ${record.key} was neither claimed nor found`);
      return { claimed: false, runId: row.run_id };
    });
    const result = claim.immediate();
    // Expired keys are dropped as new ones come in, so the table stays as small as a day of requests.
    this.statements.purgeKeys.run(now);
    return result;
  }
}
