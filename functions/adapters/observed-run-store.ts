import type { AdvanceCommit, IrVersionItem, NodeRecord, RunEvent, RunItem, RunStore, RunWriteCondition } from '../core/index.ts';
import { commitOneByOne } from '../core/index.ts';

/** What a store observer is told after each successful write. */
export type StoreWrite =
  | { kind: 'run'; run: RunItem }
  | { kind: 'step'; step: NodeRecord }
  | { kind: 'steps'; steps: readonly NodeRecord[] }
  | { kind: 'events'; events: readonly RunEvent[] };

/** Reads `count` requests per operation, so benchmarks can price a run. */
export interface StoreCounters {
  reads: number;
  writes: number;
}

/**
 * A RunStore that tells a listener about every write once it succeeded (live progress in the CLI)
 * and counts operations; every call goes to the real store underneath.
 */
export class ObservedRunStore implements RunStore {
  readonly counters: StoreCounters = { reads: 0, writes: 0 };

  constructor(
    private readonly inner: RunStore,
    private readonly listener: (write: StoreWrite) => void = () => {},
  ) {}

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    this.counters.writes += 1;
    await this.inner.putRun(run, condition);
    this.listener({ kind: 'run', run });
  }
  async getRun(runId: string): Promise<RunItem | undefined> {
    this.counters.reads += 1;
    return this.inner.getRun(runId);
  }
  async putIrVersion(item: IrVersionItem): Promise<void> {
    this.counters.writes += 1;
    return this.inner.putIrVersion(item);
  }
  async getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    this.counters.reads += 1;
    return this.inner.getIrVersion(runId, version);
  }
  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    this.counters.writes += 1;
    await this.inner.putRecord(step, expectStatus);
    this.listener({ kind: 'step', step });
  }
  async putRecords(steps: readonly NodeRecord[]): Promise<void> {
    this.counters.writes += 1;
    await this.inner.putRecords(steps);
    this.listener({ kind: 'steps', steps });
  }
  async getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    this.counters.reads += 1;
    return this.inner.getRecords(runId, seqs);
  }
  async listRecords(runId: string, afterSeq?: number): Promise<NodeRecord[]> {
    this.counters.reads += 1;
    return this.inner.listRecords(runId, afterSeq);
  }
  async appendEvents(events: readonly RunEvent[]): Promise<void> {
    this.counters.writes += 1;
    await this.inner.appendEvents(events);
    this.listener({ kind: 'events', events });
  }
  async listEvents(runId: string, afterKey?: string): Promise<RunEvent[]> {
    this.counters.reads += 1;
    return this.inner.listEvents(runId, afterKey);
  }
  /** One write when the store commits atomically; the listener hears its parts in the order they would be written one by one. */
  async commitAdvance(commit: AdvanceCommit): Promise<void> {
    if (!this.inner.commitAdvance) return commitOneByOne(this, commit);
    this.counters.writes += 1;
    await this.inner.commitAdvance(commit);
    if (commit.events.length > 0) this.listener({ kind: 'events', events: commit.events });
    if (commit.records.length > 0) this.listener({ kind: 'steps', steps: commit.records });
    this.listener({ kind: 'run', run: commit.run });
  }
  async listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]> {
    this.counters.reads += 1;
    return this.inner.listRuns(options);
  }
  async listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]> {
    this.counters.reads += 1;
    return this.inner.listWaiting(options);
  }
}
