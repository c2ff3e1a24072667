import type { AdvanceCommit, IrVersionItem, NodeRecord, RunEvent, RunItem, RunStore, RunWriteCondition } from '../../core/index.ts';
import { commitAdvance } from '../../core/index.ts';

/**
 * The store of a command that drives runs (`run`, `resume`): what it has parsed once is not parsed again.
 * An IR version is written once, so a version read is kept. A run's records, once listed, are kept and
 * brought up to date with every record this store writes: the process holds the run (the claim), so no
 * other process writes its records, and a takeover fails this process's next write with StaleRunError.
 * A resume lists a run's records for the walk and again for its report, and reads the workflow version
 * for its checks and again for the report: each parse of a 100-node run's records or version is ~5-10 ms.
 * Commands that only read (status, logs) read the store as it is, with no such memo.
 */
export class ReadOnceRunStore implements RunStore {
  private readonly versions = new Map<string, IrVersionItem>();
  private readonly records = new Map<string, Map<number, NodeRecord>>();

  constructor(private readonly inner: RunStore) {}

  async getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    const key = `${runId}#${version}`;
    const known = this.versions.get(key);
    if (known) return known;
    const item = await this.inner.getIrVersion(runId, version);
    if (item) this.versions.set(key, item);
    return item;
  }

  async putIrVersion(item: IrVersionItem): Promise<void> {
    await this.inner.putIrVersion(item);
    this.versions.set(`${item.runId}#${item.version}`, item);
  }

  async listRecords(runId: string, afterSeq = 0): Promise<NodeRecord[]> {
    const known = this.records.get(runId);
    if (known) return [...known.values()].filter((record) => record.seq > afterSeq).sort((a, b) => a.seq - b.seq);
    if (afterSeq > 0) return this.inner.listRecords(runId, afterSeq);
    const listed = await this.inner.listRecords(runId);
    this.records.set(runId, new Map(listed.map((record) => [record.seq, record])));
    return listed;
  }

  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    await this.inner.putRecord(step, expectStatus);
    this.written([step]);
  }

  async putRecords(steps: readonly NodeRecord[]): Promise<void> {
    await this.inner.putRecords(steps);
    this.written(steps);
  }

  async commitAdvance(commit: AdvanceCommit): Promise<void> {
    await commitAdvance(this.inner, commit);
    for (const item of commit.irVersions ?? []) this.versions.set(`${item.runId}#${item.version}`, item);
    this.written(commit.records);
  }

  getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    return this.inner.getRecords(runId, seqs);
  }
  putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    return this.inner.putRun(run, condition);
  }
  getRun(runId: string): Promise<RunItem | undefined> {
    return this.inner.getRun(runId);
  }
  appendEvents(events: readonly RunEvent[]): Promise<void> {
    return this.inner.appendEvents(events);
  }
  listEvents(runId: string, afterKey?: string): Promise<RunEvent[]> {
    return this.inner.listEvents(runId, afterKey);
  }
  listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]> {
    return this.inner.listRuns(options);
  }

  listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]> {
    return this.inner.listWaiting(options);
  }

  /** Only into a listing already kept: a run never listed is read from the store when it is. */
  private written(steps: readonly NodeRecord[]): void {
    for (const step of steps) this.records.get(step.runId)?.set(step.seq, step);
  }
}
