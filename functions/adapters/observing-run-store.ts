import type { AdvanceCommit, IrVersionItem, NodeRecord, ObservedWrite, RunEvent, RunItem, RunObserver, RunStore, RunWriteCondition } from '../core/index.ts';
import { commitAdvance, observationsOf } from '../core/index.ts';

/** Events appended ahead of their run item (cancel, interrupt, a child's takeover) are held this long at most, per process. */
const MAX_HELD_RUNS = 100;

/**
 * A RunStore that tells a RunObserver (traces, metrics, logs) what each durable write of a run did
 * (core's `observationsOf`): a commit with its events and node visits, a run item written after its
 * events (cancel, interrupted, an unexpected failure), a run created. Every call goes to the store
 * underneath; an observer that throws is reported to `onError` and never fails the write.
 */
export class ObservingRunStore implements RunStore {
  /** Events appended by `appendEvents`, told with the run item written next (the writers write events first). */
  private readonly held = new Map<string, RunEvent[]>();

  constructor(
    /** The store every call goes to. */
    readonly inner: RunStore,
    private readonly observer: RunObserver,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  private tell(write: ObservedWrite): void {
    try {
      const observations = observationsOf(write);
      if (observations.length > 0) this.observer.observe(observations);
    } catch (error) {
      this.onError(error);
    }
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    const events = this.held.get(run.runId) ?? [];
    this.held.delete(run.runId);
    await this.inner.putRun(run, condition);
    this.tell({ run, events, created: condition.notExists === true });
  }

  async appendEvents(events: readonly RunEvent[]): Promise<void> {
    await this.inner.appendEvents(events);
    for (const event of events) {
      const held = this.held.get(event.runId) ?? [];
      if (held.length === 0) this.held.set(event.runId, held);
      held.push(event);
    }
    while (this.held.size > MAX_HELD_RUNS) this.held.delete(this.held.keys().next().value as string);
  }

  /** The store's own commit when it has one, else its writes one by one (core's `commitAdvance`); told once all of it is durable. */
  async commitAdvance(commit: AdvanceCommit): Promise<void> {
    await commitAdvance(this.inner, commit);
    this.tell({ run: commit.run, events: commit.events, visits: commit.visits, step: commit.step, created: commit.condition.notExists === true });
  }

  getRun(runId: string): Promise<RunItem | undefined> {
    return this.inner.getRun(runId);
  }
  putIrVersion(item: IrVersionItem): Promise<void> {
    return this.inner.putIrVersion(item);
  }
  getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    return this.inner.getIrVersion(runId, version);
  }
  putRecord(record: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    return this.inner.putRecord(record, expectStatus);
  }
  putRecords(records: readonly NodeRecord[]): Promise<void> {
    return this.inner.putRecords(records);
  }
  getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    return this.inner.getRecords(runId, seqs);
  }
  listRecords(runId: string, afterSeq?: number): Promise<NodeRecord[]> {
    return this.inner.listRecords(runId, afterSeq);
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
}
