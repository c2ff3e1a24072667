import type { MessagePort } from 'node:worker_threads';
import { BlobOffloadRunStore } from '../../adapters/blob-offload-run-store.ts';
import { FileBlobStore } from '../../adapters/file-blob-store.ts';
import type { BlobStore, FlowStore, MemoStore, RunItem, RunStore } from '../../core/index.ts';

export interface CliStoreOptions {
  stateDir: string;
  store: 'sqlite' | 'dynamodb';
  /** DynamoDB table (`--table`, else FLOWMEND_TABLE, else `flowmend`). */
  table: string | undefined;
  /** SQLite: the run store's writes go to serve's writer thread through this port (sqlite-writer-thread.ts). */
  writerPort?: MessagePort | undefined;
  /** SQLite: the process ends without closing the store, leaving its WAL to the next (openSqlite's `leavesWal`). */
  leavesWal?: boolean;
}

export interface CliStore {
  store: RunStore;
  blobs: BlobStore;
  /** pflow's memo cache, beside the runs. */
  memo: MemoStore;
  /** Flow control's keys (concurrency slots, rate windows), beside the runs. */
  flow: FlowStore;
  /** Where the runs are, for messages. */
  where: string;
  /** Removes a held run's blobs that no commit refers to (a commit that failed after writing them). */
  removeOrphanBlobs(runId: string): Promise<string[]>;
  /** SQLite: every unfinished run whose owner's id starts with `ownerPrefix`, oldest first (serve's recovery). */
  listUnfinishedOwned?(ownerPrefix: string): Promise<RunItem[]>;
  close(): void;
}

/**
 * The store a CLI command works on: SQLite in `<state-dir>/flowmend.db` (the default), or a DynamoDB
 * table. Each is imported only when chosen, so a command loads neither the AWS SDK nor the native
 * SQLite module unless it uses it. Outputs too large for a row live under `<state-dir>/blobs` either way.
 */
export const openCliStore = async (options: CliStoreOptions, env: Readonly<Record<string, string | undefined>>): Promise<CliStore> => {
  const blobs = new FileBlobStore(options.stateDir);
  if (options.store === 'dynamodb') {
    const { openDynamoCliStore } = await import('./dynamo-cli-store.ts');
    const dynamo = await openDynamoCliStore(options.table ?? env.FLOWMEND_TABLE ?? 'flowmend', env);
    const store = new BlobOffloadRunStore(dynamo.store, blobs);
    return {
      store,
      blobs,
      memo: dynamo.memo,
      flow: dynamo.flow,
      where: dynamo.where,
      close: dynamo.close,
      removeOrphanBlobs: (runId) => store.removeOrphanBlobs(runId),
    };
  }
  const [{ SqliteRunStore }, { SqliteMemoStore }, { SqliteFlowStore }, { openSqlite }] = await Promise.all([
    import('../../adapters/sqlite-run-store.ts'),
    import('../../adapters/sqlite-memo-store.ts'),
    import('../../adapters/sqlite-flow-store.ts'),
    import('../../adapters/sqlite-database.ts'),
  ]);
  const database = openSqlite(options.stateDir, { leavesWal: options.leavesWal ?? false });
  const sqlite = new SqliteRunStore(database, { writerPort: options.writerPort });
  const memo = new SqliteMemoStore(database.db, database.path);
  const flow = new SqliteFlowStore(database.db, database.path);
  const store = new BlobOffloadRunStore(sqlite, blobs);
  return {
    store,
    blobs,
    memo,
    flow,
    where: options.stateDir,
    close: () => sqlite.close(),
    removeOrphanBlobs: (runId) => store.removeOrphanBlobs(runId),
    listUnfinishedOwned: (ownerPrefix) => sqlite.listUnfinishedOwned(ownerPrefix),
  };
};
