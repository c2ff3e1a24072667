import type Database from 'better-sqlite3';

/**
 * The run store's tables. Each row keeps its item as JSON (`body`) beside the few columns that keys,
 * conditions and listings read, so an item round-trips exactly and a new field needs no migration; a run
 * item's path maps (`latest`, `visits`) are the exception: a row a node in `run_paths`, so that a step
 * writes the entries it changed, not the whole maps (core/run-path.ts). `path_rev` names the write
 * whose maps the rows hold. `user_version` numbers the layout; a later layout migrates from it
 * (3: `run_paths` and `path_rev`; a run written by layout 2 keeps its maps in its body until its next write).
 */
const SCHEMA_VERSION = 3;
/** When a waiting run is due (waits/wait-model.ts `wakeAt`), as SQL over its body: the index below and its queries use it verbatim. */
export const WAKE_AT = "COALESCE(json_extract(body, '$.wait.answer.at'), json_extract(body, '$.wait.until'))";
export const IS_WAITING = "json_extract(body, '$.status') = 'waiting'";
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, workflow_name TEXT NOT NULL, created_at INTEGER NOT NULL,
    seq INTEGER NOT NULL, owner_id TEXT, body TEXT NOT NULL, path_rev TEXT
  );
  CREATE TABLE IF NOT EXISTS run_paths (
    run_id TEXT NOT NULL, node_id TEXT NOT NULL, latest INTEGER, visits INTEGER, PRIMARY KEY (run_id, node_id)
  ) WITHOUT ROWID;
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

/** Creates the run store's tables, or migrates them to this layout, in one IMMEDIATE transaction (any connection may be first). */
export const ensureRunSchema = (db: Database.Database): void => {
  if (Number(db.pragma('user_version', { simple: true })) >= SCHEMA_VERSION) return;
  db.transaction(() => {
    db.exec(SCHEMA);
    const columns = db.prepare<[], { name: string }>("SELECT name FROM pragma_table_info('runs')").all();
    if (!columns.some((c) => c.name === 'path_rev')) db.exec('ALTER TABLE runs ADD COLUMN path_rev TEXT');
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
};
