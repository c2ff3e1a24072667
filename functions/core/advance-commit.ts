import type { AdvanceCommit, RunStore } from './run-store.ts';

/**
 * Writes one engine step through the store's atomic `commitAdvance` when it has one (the embedded SQLite
 * store: one transaction, one fsync). Otherwise the workflow versions first, then events, then the records beside the run item:
 * the run item is the commit point, and it still carries the records, so a record lost between the
 * two writes is there for the walk of a later resume.
 */
export const commitAdvance = async (store: RunStore, commit: AdvanceCommit): Promise<void> =>
  store.commitAdvance ? store.commitAdvance(commit) : commitOneByOne(store, commit);

/** The writes of a commit as separate calls, for stores without transactions. */
export const commitOneByOne = async (store: RunStore, commit: AdvanceCommit): Promise<void> => {
  for (const item of commit.irVersions ?? []) await store.putIrVersion(item);
  if (commit.events.length > 0) await store.appendEvents(commit.events);
  await Promise.all([commit.records.length > 0 ? store.putRecords(commit.records) : undefined, store.putRun(commit.run, commit.condition)]);
};
