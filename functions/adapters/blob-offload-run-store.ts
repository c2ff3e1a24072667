import type { AdvanceCommit, IrVersionItem, NodeRecord, RunEvent, RunItem, RunStore, RunWriteCondition } from '../core/index.ts';
import {
  BLOB_PREFIX,
  type BlobStore,
  blobMarker,
  blobRefIn,
  commitAdvance,
  InvalidInputError,
  MAX_INLINE_OUTPUT_BYTES,
  runResultBlobKey,
  stepBlobKey,
  utf8Length,
} from '../core/index.ts';

/** A blob store that can list and remove its blobs (the local host's files; S3 expires them by its bucket's lifecycle rule instead). */
export interface SweepableBlobStore extends BlobStore {
  keysUnder(prefix: string): Promise<string[]>;
  remove(key: string): Promise<void>;
}

const sweepable = (blobs: BlobStore): blobs is SweepableBlobStore => 'keysUnder' in blobs && 'remove' in blobs;

/**
 * A RunStore whose step records keep large outputs as blobs: `putRecord` stores outputs over
 * `MAX_INLINE_OUTPUT_BYTES` (or already uploaded by a runner) as a reference, and every read puts
 * the outputs back, so the engine never sees a reference. A run's result (its declared outputs,
 * which may repeat several large node outputs) goes the same way out of the run item.
 */
export class BlobOffloadRunStore implements RunStore {
  constructor(
    private readonly inner: RunStore,
    private readonly blobs: BlobStore,
    private readonly maxInlineBytes = MAX_INLINE_OUTPUT_BYTES,
  ) {}

  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    return this.inner.putRecord(await this.offload(step), expectStatus);
  }
  async putRecords(steps: readonly NodeRecord[]): Promise<void> {
    return this.inner.putRecords(await Promise.all(steps.map((step) => this.offload(step))));
  }
  async commitAdvance(commit: AdvanceCommit): Promise<void> {
    const [records, run] = await Promise.all([Promise.all(commit.records.map((step) => this.offload(step))), this.offloadResult(commit.run)]);
    return commitAdvance(this.inner, { ...commit, records, run });
  }
  async getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    return Promise.all((await this.inner.getRecords(runId, seqs)).map((step) => this.restore(step)));
  }
  async listRecords(runId: string, afterSeq?: number): Promise<NodeRecord[]> {
    return Promise.all((await this.inner.listRecords(runId, afterSeq)).map((step) => this.restore(step)));
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    return this.inner.putRun(await this.offloadResult(run), condition);
  }
  async getRun(runId: string): Promise<RunItem | undefined> {
    const run = await this.inner.getRun(runId);
    return run === undefined ? undefined : this.restoreResult(run);
  }
  putIrVersion(item: IrVersionItem): Promise<void> {
    return this.inner.putIrVersion(item);
  }
  getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    return this.inner.getIrVersion(runId, version);
  }
  appendEvents(events: readonly RunEvent[]): Promise<void> {
    return this.inner.appendEvents(events);
  }
  listEvents(runId: string, afterKey?: string): Promise<RunEvent[]> {
    return this.inner.listEvents(runId, afterKey);
  }
  /** Listings show no results: a result kept as a blob is left out (`outputs` absent), not read, for each run listed. */
  async listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]> {
    return (await this.inner.listRuns(options)).map(({ outputs, ...run }) =>
      blobRefIn(outputs) === undefined && outputs !== undefined ? { ...run, outputs } : run,
    );
  }

  async listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]> {
    return Promise.all((await this.inner.listWaiting(options)).map((run) => this.restoreResult(run)));
  }

  /**
   * Removes the blobs of a run that nothing committed refers to: a step's outputs or a run's result
   * written before a commit that then failed (a full disk, a lost store). Only for a caller that holds
   * the run (it created or claimed it): no one else writes its blobs then, and a resume would otherwise
   * need room for them twice. Params blobs are left (each step writes its own afresh). Answers the keys removed.
   */
  async removeOrphanBlobs(runId: string): Promise<string[]> {
    if (!sweepable(this.blobs)) return [];
    const prefix = `${BLOB_PREFIX}${runId}/`;
    const candidates = (await this.blobs.keysUnder(prefix)).filter((key) => key.startsWith(`${prefix}steps/`) || key === runResultBlobKey(runId));
    if (candidates.length === 0) return [];
    const [records, run] = await Promise.all([this.inner.listRecords(runId), this.inner.getRun(runId)]);
    const referenced = new Set(
      [...records, ...(run?.pendingRecords ?? [])].map((record) => blobRefIn(record.outputs)?.key).concat(blobRefIn(run?.outputs)?.key),
    );
    const orphans = candidates.filter((key) => !referenced.has(key));
    for (const key of orphans) await this.blobs.remove(key);
    return orphans;
  }

  private async offloadResult(run: RunItem): Promise<RunItem> {
    if (run.outputs === undefined || blobRefIn(run.outputs) !== undefined) return run;
    const body = JSON.stringify(run.outputs);
    if (utf8Length(body) <= this.maxInlineBytes) return run;
    const ref = await this.blobs.put(runResultBlobKey(run.runId), body);
    return { ...run, outputs: blobMarker(ref) };
  }

  private async restoreResult(run: RunItem): Promise<RunItem> {
    const ref = blobRefIn(run.outputs);
    if (ref === undefined) return run;
    if (ref.key !== runResultBlobKey(run.runId)) {
      throw new InvalidInputError(`run ${run.runId} refers to blob ${ref.key} for its result, not its own ${runResultBlobKey(run.runId)}`, {
        details: { runId: run.runId, key: ref.key },
      });
    }
    return { ...run, outputs: JSON.parse(await this.blobs.get(ref)) as Record<string, unknown> };
  }

  private async offload(step: NodeRecord): Promise<NodeRecord> {
    if (step.outputs === undefined) return step;
    const uploaded = blobRefIn(step.outputs);
    if (uploaded !== undefined) {
      this.checkOwnKey(step, uploaded.key);
      return step;
    }
    const body = JSON.stringify(step.outputs);
    if (utf8Length(body) <= this.maxInlineBytes) return step;
    const ref = await this.blobs.put(stepBlobKey(step.runId, step.seq), body);
    return { ...step, outputs: blobMarker(ref) };
  }

  private async restore(step: NodeRecord): Promise<NodeRecord> {
    const ref = blobRefIn(step.outputs);
    if (ref === undefined) return step;
    this.checkOwnKey(step, ref.key);
    const outputs = JSON.parse(await this.blobs.get(ref)) as Record<string, unknown>;
    return { ...step, outputs };
  }

  // A runner's result is untrusted: a reference may only name the blob of its own step, never another run's.
  private checkOwnKey(step: NodeRecord, key: string): void {
    const own = stepBlobKey(step.runId, step.seq);
    if (key !== own) {
      throw new InvalidInputError(`step ${step.seq} of run ${step.runId} refers to blob ${key}, not its own ${own}`, {
        details: { runId: step.runId, seq: step.seq, key },
      });
    }
  }
}
