import { commitAdvance } from './advance-commit.ts';
import { RunBusyError, RunNotFoundError, StaleRunError } from './errors.ts';
import { cryptoIds, type Ids } from './ids.ts';
import type { RepairApproval, Workflow } from './ir.ts';
import { type IrVersionItem, type Owner, type ParentLink, type RunItem, RunMetricsSchema } from './run-model.ts';
import type { RunStore } from './run-store.ts';
import { type RunTrace, resumeRunTrace, type TraceParent } from './trace-context.ts';
import { describeWait } from './waits/wait-model.ts';

export const DEFAULT_MAX_REPAIRS = 3;

/** A run id that sorts by start time and reads as one: `20261122-041530-a3f9c1d2`. */
export const newRunId = (now: number, ids: Ids = cryptoIds): string => {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `${stamp}-${ids.hex(4)}`;
};

/** Tells whether the owner of a run is still running it (a live pid locally, a running execution on AWS). */
export type OwnerLiveness = (owner: Owner) => Promise<boolean>;

export interface NewRun {
  runId: string;
  workflow: Workflow;
  workflowName: string;
  params: Record<string, unknown>;
  owner: Owner;
  repairEnabled: boolean;
  maxRepairs: number;
  /** pflow's `--no-cache`: skip memo-cache reads (writes go on). */
  noCache?: boolean;
  mode?: 'express' | 'standard';
  /** Where file nodes resolve relative paths; none on AWS, where file nodes are refused. */
  workspace?: string;
  /** The registered workflow's version the run was started from. */
  workflowVersion?: number;
  /** A child run: the workflow node of the parent that runs it. */
  parent?: ParentLink;
  /** The run's trace (trace-context.ts `startRunTrace`), when it has one. */
  trace?: RunTrace | undefined;
  now: number;
  /** Gated nodes approved in advance; the run's own repair approval policy. */
  autoApprove?: string[];
  repairApproval?: RepairApproval;
  /** Randomness for the item's `rev`; `cryptoIds` when not given. */
  ids?: Ids;
}

/**
 * Writes a new run and its original workflow version; the first Advance validates and starts it. The item
 * returned is the one written, `rev` included: a host in this process may hand it to the engine's cache
 * (EngineCache.rememberRun) so that the first Advance does not read it back.
 */
export const createRun = async (store: RunStore, spec: NewRun): Promise<RunItem> => {
  const original: IrVersionItem = { runId: spec.runId, version: 0, ir: spec.workflow, source: 'original', createdAt: spec.now };
  const run: RunItem = {
    runId: spec.runId,
    workflowName: spec.workflowName,
    ...(spec.workflowVersion === undefined ? {} : { workflowVersion: spec.workflowVersion }),
    status: 'running',
    irVersion: 0,
    params: spec.params,
    ...(spec.workspace === undefined ? {} : { workspace: spec.workspace }),
    createdAt: spec.now,
    updatedAt: spec.now,
    seq: 0,
    needsWalk: false,
    latest: {},
    visits: {},
    repairEnabled: spec.repairEnabled,
    ...(spec.noCache ? { noCache: true } : {}),
    maxRepairs: spec.maxRepairs,
    repairAttempts: 0,
    repairs: [],
    warnings: [],
    owner: spec.owner,
    eventSeq: 0,
    rev: (spec.ids ?? cryptoIds).hex(6),
    repairedNodes: [],
    pendingRecords: [],
    flushedThrough: 0,
    metrics: RunMetricsSchema.parse({}),
    mode: spec.mode ?? 'express',
    ...(spec.parent === undefined ? {} : { parent: spec.parent }),
    ...(spec.trace === undefined ? {} : { trace: spec.trace }),
    ...(spec.autoApprove && spec.autoApprove.length > 0 ? { autoApprove: spec.autoApprove } : {}),
    ...(spec.repairApproval ? { repairApproval: spec.repairApproval } : {}),
  };
  // The version and the item in one transaction where the store has them (SQLite: one fsync, not two); else the version first.
  await commitAdvance(store, { irVersions: [original], events: [], records: [], run, condition: { notExists: true } });
  return run;
};

export interface ClaimOptions {
  owner: Owner;
  isAlive: OwnerLiveness;
  now: number;
  /** A person's patch, already checked, to apply as the next workflow version. */
  patch?: IrVersionItem;
  /**
   * The run as the caller read it a moment ago, taken over instead of read again. The claim's write is
   * conditional on what it read (its seq, or its previous owner), so a run another process took since loses
   * the race as it would have with a fresh read.
   */
  read?: RunItem;
  /** Change the repair budget for the rest of the run. */
  maxRepairs?: number;
  repairEnabled?: boolean;
  /** pflow's `resume --no-cache` (true) or `--cache` (false): whether the rest of the run skips memo-cache reads. */
  noCache?: boolean;
  /** The resume request's traceparent, and whether this host exports traces (trace-context.ts). */
  trace?: { caller?: TraceParent | undefined; traced: boolean };
  ids?: Ids;
  /** Change the run's repair approval policy for the rest of the run. */
  repairApproval?: RepairApproval;
}

/**
 * Takes a run over for `resume`: refuses while its owner is alive; otherwise becomes the owner
 * with a conditional write on the previous owner, so of two resumers at once exactly one wins.
 * The next Advance walks from the start and replays what is recorded.
 */
export const claimRun = async (store: RunStore, runId: string, options: ClaimOptions): Promise<RunItem> => {
  const run = options.read?.runId === runId ? options.read : await store.getRun(runId);
  if (!run) throw new RunNotFoundError(`no run '${runId}' in this store (see \`flowmend runs\`)`);
  // A child run is driven by its parent's execution, which records the parent's node when the child ends.
  if (run.parent) {
    throw new RunBusyError(
      `run ${runId} is a child run of run ${run.parent.runId} (its node '${run.parent.nodeId}'); resume the parent, which resumes this child where it stopped`,
    );
  }
  // A waiting run goes on through its wait: a wake-up when due, an answer (`approve`), or a cancel first.
  if (run.status === 'waiting') {
    throw new RunBusyError(
      `run ${runId} is waiting: ${run.wait ? describeWait(run.wait) : 'for a wake-up'}. It goes on when its wait is answered or due (\`flowmend approve ${runId}\` answers a gate or a held repair); cancel it to resume it another way`,
    );
  }
  if (run.status === 'succeeded' && !options.patch) {
    throw new RunBusyError(`run ${runId} already succeeded; nothing to resume`);
  }
  if (run.owner && run.status === 'running' && (await options.isAlive(run.owner))) {
    const where = run.owner.pid ? ` (pid ${run.owner.pid}${run.owner.host ? ` on ${run.owner.host}` : ''})` : '';
    throw new RunBusyError(`run ${runId} is still being run by ${run.owner.id}${where}; wait for it or stop it first`);
  }
  const previousOwner = run.owner?.id;
  if (options.patch) {
    // The patch's version goes in the claim's commit (below).
    run.irVersion = options.patch.version;
    run.repairedNodes = [...new Set([...run.repairedNodes, ...(options.patch.nodesChanged ?? [])])];
  }
  const resumedFrom = run.status;
  // A new stretch of the run's trace; the one before never ended when its process died with the run running.
  const trace = resumeRunTrace(
    run.trace,
    { until: run.updatedAt, open: resumedFrom === 'running' },
    { caller: options.trace?.caller, traced: options.trace?.traced ?? false, now: options.now, ...(options.ids ? { ids: options.ids } : {}) },
  );
  if (trace) run.trace = trace;
  run.status = 'running';
  run.needsWalk = true;
  run.owner = options.owner;
  run.updatedAt = options.now;
  if (options.maxRepairs !== undefined) run.maxRepairs = options.maxRepairs;
  if (options.repairEnabled !== undefined) run.repairEnabled = options.repairEnabled;
  if (options.repairApproval !== undefined) run.repairApproval = options.repairApproval;
  if (options.noCache === true) run.noCache = true;
  else if (options.noCache === false) delete run.noCache;
  // A resumed run gets a fresh repair budget only when a person patched it; otherwise the count goes on.
  if (options.patch) {
    run.repairAttempts = 0;
    delete run.lastErrorSignature;
  }
  delete run.outputs;
  // Slots it held were given back when it stopped (or run out): a resumed run takes them again.
  delete run.holds;
  const key = String(run.eventSeq).padStart(8, '0');
  run.eventSeq += 1;
  const event = {
    runId,
    key,
    at: options.now,
    type: 'run_resumed' as const,
    message: `resumed from ${resumedFrom}${options.patch ? ` with workflow version ${options.patch.version}` : ''}`,
  };
  try {
    // One transaction where the store has them (SQLite: one fsync, and a resumer that lost the race writes nothing,
    // not even its patch's version); a store without them writes the version first, so no run item names a missing one.
    await commitAdvance(store, {
      ...(options.patch ? { irVersions: [options.patch] } : {}),
      events: [event],
      records: [],
      run,
      condition: previousOwner === undefined ? { seq: run.seq } : { ownerId: previousOwner },
    });
  } catch (error) {
    if (!(error instanceof StaleRunError)) throw error;
    throw new RunBusyError(`run ${runId} was resumed by another process at the same moment; see \`flowmend status ${runId}\``, { cause: error });
  }
  return run;
};

export interface InterruptedExecution {
  /** The owner the dead execution advanced the run for, when known (the Continue state's Catch knows it). */
  ownerId?: string;
  /** When the execution stopped; a run written after that is being advanced by another execution. */
  stoppedAt: number;
  /** What Step Functions reported, e.g. `States.Timeout`, `StepFunctions.ThrottlingException`. */
  code: string;
  message: string;
  now: number;
}

export type InterruptOutcome = { marked: true } | { marked: false; reason: string };

/**
 * Records that the execution advancing a run died (failed, timed out, aborted, or its continue could
 * not start), so the run reads `interrupted` and can be resumed instead of showing `running` for ever.
 * Only a running run is marked, only for its owner, and only if nothing wrote it after the execution
 * stopped; a conditional write on the owner makes a concurrent takeover win. Repeating it is harmless.
 */
export const markInterrupted = async (store: RunStore, runId: string, execution: InterruptedExecution): Promise<InterruptOutcome> => {
  const run = await store.getRun(runId);
  if (!run) return { marked: false, reason: `no run '${runId}'` };
  if (run.status !== 'running') return { marked: false, reason: `run ${runId} is ${run.status}` };
  const ownerId = run.owner?.id;
  if (execution.ownerId !== undefined && ownerId !== execution.ownerId) return { marked: false, reason: `run ${runId} is owned by ${ownerId ?? 'nobody'} now` };
  if (run.updatedAt > execution.stoppedAt)
    return { marked: false, reason: `run ${runId} was written after the execution stopped: another execution advances it` };
  run.status = 'interrupted';
  run.lastError = {
    category: 'transient',
    code: execution.code,
    message: `the execution running this run stopped: ${execution.message}; resume the run to go on`,
    fixable: false,
  };
  run.updatedAt = execution.now;
  const key = String(run.eventSeq).padStart(8, '0');
  run.eventSeq += 1;
  await store.appendEvents([{ runId, key, at: execution.now, type: 'run_interrupted', message: `${execution.code}: ${execution.message}` }]);
  try {
    await store.putRun(run, ownerId === undefined ? { seq: run.seq } : { ownerId });
  } catch (error) {
    if (!(error instanceof StaleRunError)) throw error;
    return { marked: false, reason: `run ${runId} was taken over while being marked` };
  }
  return { marked: true };
};
