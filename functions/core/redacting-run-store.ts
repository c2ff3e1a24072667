import { commitAdvance } from './advance-commit.ts';
import type { Redactor } from './redactor.ts';
import type { IrVersionItem, NodeRecord, RunEvent, RunItem } from './run-model.ts';
import { sharePathChanges } from './run-path.ts';
import type { AdvanceCommit, RunStore, RunWriteCondition } from './run-store.ts';

/** The mark a secret input's value leaves in the stored run item. */
export const SECRET_INPUT_MARK = '[secret input]';

/**
 * Keeps secrets out of the store: every write goes through the redactor, and the values of secret
 * inputs are replaced by a mark. Reading a run puts back the secret inputs this process was given
 * (at `run` from the command line, at `resume` from `FLOWMEND_SECRET_<NAME>`), so the engine resolves
 * templates with the real values while nothing durable holds them.
 */
export class RedactingRunStore implements RunStore {
  constructor(
    private readonly inner: RunStore,
    private readonly redactor: Redactor,
    private readonly secretInputs: Readonly<Record<string, string>> = {},
  ) {}

  private stored(run: RunItem): RunItem {
    const params = { ...run.params };
    for (const name of Object.keys(this.secretInputs)) if (Object.hasOwn(params, name)) params[name] = SECRET_INPUT_MARK;
    const copy = this.redactor.value({ ...run, params });
    // With no secret to redact the copy holds the run's own maps, and what changed in them is the copy's
    // too; a redacted copy is deep (a key may change), and is written whole.
    if (copy.latest === run.latest && copy.visits === run.visits) sharePathChanges(run, copy);
    return copy;
  }

  async putRun(run: RunItem, condition: RunWriteCondition): Promise<void> {
    return this.inner.putRun(this.stored(run), condition);
  }

  async commitAdvance(commit: AdvanceCommit): Promise<void> {
    return commitAdvance(this.inner, {
      ...commit,
      events: this.redactor.value(commit.events),
      records: this.redactor.value(commit.records),
      run: this.stored(commit.run),
      ...(commit.visits ? { visits: this.redactor.value(commit.visits) } : {}),
    });
  }

  async getRun(runId: string): Promise<RunItem | undefined> {
    const run = await this.inner.getRun(runId);
    if (!run) return run;
    for (const [name, value] of Object.entries(this.secretInputs)) if (run.params[name] === SECRET_INPUT_MARK) run.params[name] = value;
    return run;
  }

  /** Workflows hold no secret values by construction (validation refuses a literal credential). */
  putIrVersion(item: IrVersionItem): Promise<void> {
    return this.inner.putIrVersion(item);
  }

  getIrVersion(runId: string, version: number): Promise<IrVersionItem | undefined> {
    return this.inner.getIrVersion(runId, version);
  }

  putRecord(record: NodeRecord, expectStatus?: NodeRecord['status'] | null): Promise<void> {
    return this.inner.putRecord(this.redactor.value(record), expectStatus);
  }

  putRecords(records: readonly NodeRecord[]): Promise<void> {
    return this.inner.putRecords(this.redactor.value(records));
  }

  getRecords(runId: string, seqs: readonly number[]): Promise<NodeRecord[]> {
    return this.inner.getRecords(runId, seqs);
  }

  listRecords(runId: string, afterSeq?: number): Promise<NodeRecord[]> {
    return this.inner.listRecords(runId, afterSeq);
  }

  appendEvents(events: readonly RunEvent[]): Promise<void> {
    return this.inner.appendEvents(this.redactor.value(events));
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
