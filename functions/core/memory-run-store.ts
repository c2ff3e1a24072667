import { StaleRunError } from './errors.ts';
import type { IrVersionItem, NodeRecord, RunEvent, RunItem } from './run-model.ts';
import { type RunStore, type RunWriteCondition, waitingAmong } from './run-store.ts';
import { copyStoredValue, sameStoredValue } from './stored-value.ts';

/** Days (today included) that `listRuns` without a workflow name looks back, as the DynamoDB store does. */
const LOOKBACK_DAYS = 31;
const DAY_MS = 86_400_000;

const dayOf = (epochMs: number): string => new Date(epochMs).toISOString().slice(0, 10);

const newestFirst = (a: RunItem, b: RunItem): number => b.createdAt - a.createdAt || (a.runId < b.runId ? 1 : a.runId > b.runId ? -1 : 0);

/** RunStore in memory, for unit tests: same conditions and errors as the DynamoDB store. */
export class MemoryRunStore implements RunStore {
  private readonly runs = new Map<string, RunItem>();
  private readonly irVersions = new Map<string, IrVersionItem>();
  private readonly steps = new Map<string, Map<number, NodeRecord>>();
  private readonly events = new Map<string, Map<string, RunEvent>>();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    const existing = this.runs.get(run.runId);
    const failed: string[] = [];
    if (condition.notExists && existing) failed.push('it already exists');
    if (condition.ownerId !== undefined && existing?.owner?.id !== condition.ownerId) {
      failed.push(`its owner is not ${condition.ownerId}`);
    }
    if (condition.seq !== undefined && existing?.seq !== condition.seq) failed.push(`its seq is not ${condition.seq}`);
    if (condition.eventSeq !== undefined && (existing === undefined || (existing.eventSeq ?? 0) !== condition.eventSeq))
      failed.push(`its eventSeq is not ${condition.eventSeq}`);
    if (failed.length > 0) {
      throw new StaleRunError(`run ${run.runId} was not written: ${failed.join(', ')}`, { details: { runId: run.runId } });
    }
    this.runs.set(run.runId, copyStoredValue(run));
  }

  async getRun(runId: string): Promise<RunItem | undefined> {
    const run = this.runs.get(runId);
    return run && copyStoredValue(run);
  }

  async putIrVersion(item: IrVersionItem): Promise<void> {
    const key = `${item.runId}#${item.version}`;
    const existing = this.irVersions.get(key);
    if (existing) {
      if (sameStoredValue(existing, item)) return;
      throw new StaleRunError(`IR version ${item.version} of run ${item.runId} already exists with other content`, {
        details: { runId: item.runId, version: item.version },
      });
    }
    this.irVersions.set(key, copyStoredValue(item));
  }

  async getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    const item = this.irVersions.get(`${runId}#${version}`);
    return item && copyStoredValue(item);
  }

  async putRecord(step: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    const steps = this.steps.get(step.runId) ?? new Map<number, NodeRecord>();
    const existing = steps.get(step.seq);
    if (expectStatus === null && existing) {
      throw new StaleRunError(`step ${step.seq} of run ${step.runId} already exists`, { details: { runId: step.runId, seq: step.seq } });
    }
    if (expectStatus && existing?.status !== expectStatus) {
      throw new StaleRunError(`step ${step.seq} of run ${step.runId} is not ${expectStatus}`, {
        details: { runId: step.runId, seq: step.seq, status: existing?.status },
      });
    }
    steps.set(step.seq, copyStoredValue(step));
    this.steps.set(step.runId, steps);
  }

  async putRecords(records: readonly NodeRecord[]): Promise<void> {
    for (const step of records) {
      const steps = this.steps.get(step.runId) ?? new Map<number, NodeRecord>();
      steps.set(step.seq, copyStoredValue(step));
      this.steps.set(step.runId, steps);
    }
  }

  async getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    const steps = this.steps.get(runId);
    const found = [...new Set(seqs)].flatMap((seq) => {
      const step = steps?.get(seq);
      return step ? [copyStoredValue(step)] : [];
    });
    return found;
  }

  async listRecords(runId: string, afterSeq = 0): Promise<NodeRecord[]> {
    return [...(this.steps.get(runId)?.values() ?? [])]
      .filter((s) => s.seq > afterSeq)
      .sort((a, b) => a.seq - b.seq)
      .map((s) => copyStoredValue(s));
  }

  async appendEvents(events: readonly RunEvent[]): Promise<void> {
    for (const event of events) {
      const byKey = this.events.get(event.runId) ?? new Map<string, RunEvent>();
      byKey.set(event.key, copyStoredValue(event));
      this.events.set(event.runId, byKey);
    }
  }

  async listEvents(runId: string, afterKey?: string): Promise<RunEvent[]> {
    return [...(this.events.get(runId)?.values() ?? [])]
      .filter((e) => afterKey === undefined || e.key > afterKey)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map((e) => copyStoredValue(e));
  }

  async listWaiting(options: { limit: number; dueBy?: number }): Promise<RunItem[]> {
    return waitingAmong([...this.runs.values()], options).map((r) => copyStoredValue(r));
  }

  async listRuns(options: { limit: number; workflowName?: string }): Promise<RunItem[]> {
    const today = dayOf(this.now());
    const oldest = dayOf(this.now() - (LOOKBACK_DAYS - 1) * DAY_MS);
    const inWindow = (run: RunItem): boolean => {
      if (options.workflowName !== undefined) return run.workflowName === options.workflowName;
      const day = dayOf(run.createdAt);
      return day >= oldest && day <= today;
    };
    return [...this.runs.values()]
      .filter(inWindow)
      .sort(newestFirst)
      .slice(0, Math.max(0, options.limit))
      .map((r) => copyStoredValue(r));
  }
}
