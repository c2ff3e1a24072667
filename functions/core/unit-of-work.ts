import { commitAdvance } from './advance-commit.ts';
import type { EngineDeps } from './engine-deps.ts';
import { StaleRunError } from './errors.ts';
import { cryptoIds } from './ids.ts';
import type { NodeRecord, RunEvent, RunEventFields, RunEventType, RunItem } from './run-model.ts';

/** Largest node record (serialised) kept in the run item: beyond it, a second write costs less than a bigger run item. */
const EMBEDDED_RECORD_LIMIT = 8_192;
/** Pending records are written out once they take this much of the run item (DynamoDB items stop at 400 KB). */
const PENDING_BYTES_LIMIT = 64 * 1024;

/**
 * What one Advance call writes: the events it appends, the node records it stages, and the run item.
 * `commit` writes events first, then the run item (conditional on the owner: the commit point),
 * which carries the records of the last nodes until they are written out as their own items.
 * It decides nothing about the run; `Advance` (advance.ts) does.
 */
export class UnitOfWork {
  private readonly events: RunEvent[] = [];
  /** Node visits recorded since the last commit, told to observers with it. */
  private readonly visits: NodeRecord[] = [];
  /** When the work of the next commit began (the Advance call, or the last commit): how long the engine's own step took. */
  private since: number;

  constructor(
    readonly run: RunItem,
    private readonly deps: EngineDeps,
    private readonly owner: string,
  ) {
    this.since = deps.now();
  }

  event<T extends RunEventType>(type: T, fields: RunEventFields<T>): void {
    const key = String(this.run.eventSeq).padStart(8, '0');
    this.run.eventSeq += 1;
    this.events.push({ runId: this.run.runId, key, at: this.deps.now(), type, ...fields } as RunEvent);
  }

  /**
   * Records a node's result. A small record goes into the run item, written by `commit`; a large one
   * is written first, as its own item.
   */
  async stageRecord(record: NodeRecord): Promise<void> {
    this.visits.push(record);
    if (JSON.stringify(record).length <= EMBEDDED_RECORD_LIMIT) {
      this.run.pendingRecords.push(record);
      this.deps.cache.rememberOutputs(record);
      return;
    }
    await this.putRecord(record);
  }

  /** A visit written by other means (a batch node's end, over its running record), told to observers with this step's commit. */
  noteVisit(record: NodeRecord): void {
    this.visits.push(record);
  }

  /** Writes a node record once; a retried call that finds its own record already there goes on. */
  async putRecord(record: NodeRecord): Promise<void> {
    try {
      await this.deps.store.putRecord(record, null);
      this.deps.cache.rememberOutputs(record);
    } catch (error) {
      if (!(error instanceof StaleRunError)) throw error;
      const [existing] = await this.deps.store.getRecords(record.runId, [record.seq]);
      if (!existing || existing.nodeId !== record.nodeId || existing.cacheKey !== record.cacheKey) throw error;
    }
  }

  /**
   * Writes the step (one transaction where the store has `commitAdvance`, else one write at a time):
   * events, then the run item (conditional on the owner: the commit point) and, beside it, pending records due for their own items. Those stay in the run item until the next
   * commit, so a record lost between the two writes is still there for the walk of a later resume.
   * `flushAll: false` (a node is dispatched, the run stays on the hot path) lets records accumulate.
   */
  async commit(options: { flushAll?: boolean } = {}): Promise<void> {
    const events = this.events.splice(0);
    const visits = this.visits.splice(0);
    const run = this.run;
    // What the last commit wrote out is in its own items now: that call returned before this one began.
    run.pendingRecords = run.pendingRecords.filter((r) => r.seq > run.flushedThrough);
    const due =
      run.pendingRecords.length > 0 &&
      (options.flushAll !== false ||
        run.pendingRecords.length >= (this.deps.stepBatch ?? 1) ||
        JSON.stringify(run.pendingRecords).length > PENDING_BYTES_LIMIT);
    const written = due ? [...run.pendingRecords] : [];
    if (due) run.flushedThrough = Math.max(...written.map((r) => r.seq));
    run.updatedAt = this.deps.now();
    run.rev = (this.deps.ids ?? cryptoIds).hex(6);
    const step = { startedAt: this.since, committedAt: run.updatedAt };
    await commitAdvance(this.deps.store, { events, records: written, run, condition: { ownerId: this.owner }, step, ...(visits.length > 0 ? { visits } : {}) });
    this.since = this.deps.now();
    this.deps.cache.rememberRun(run);
  }
}
