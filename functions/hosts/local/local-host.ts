import '../../adapters/node20-polyfills.ts';
import { hostname } from 'node:os';
import { ExecutionError, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import type { BlobStore } from '../../core/blob-store.ts';
import { buildDefinition, runnerStateName, STATE, type AslDefinition } from '../../core/definition.ts';
import { EngineCache } from '../../core/engine-cache.ts';
import type { ExecutionLimits } from '../../core/execution-limits.ts';
import { cryptoIds, type Ids } from '../../core/ids.ts';
import { StaleRunError } from '../../core/errors.ts';
import type { Workflow } from '../../core/ir.ts';
import { makeCatalog, type NodeRunner } from '../../core/node-type.ts';
import { claimRun, createRun, newRunId, type ClaimOptions } from '../../core/run-lifecycle.ts';
import type { Owner } from '../../core/run-model.ts';
import { loadRunReport, type RunReport } from '../../core/run-report.ts';
import type { RunStore } from '../../core/run-store.ts';
import type { RepairReport } from '../../core/state-io.ts';
import { makeAdvanceHandler } from '../lambda/advance.ts';
import { makeRunNodeHandler } from '../lambda/run-node.ts';
import { builtinRunners, makeBuiltinRunners } from '../../nodes/catalog.ts';
import type { Limits } from '../../core/limits.ts';
import { ObservedRunStore, type StoreWrite } from '../../adapters/observed-run-store.ts';

export type RepairHandler = (event: unknown) => Promise<RepairReport>;

export interface LocalHostOptions {
  store: RunStore;
  /** Where runners put outputs too large for a state payload (the same path as S3 presigned uploads on AWS). */
  blobs?: BlobStore;
  runners?: readonly NodeRunner[];
  /** The ASL to run; by default the one `buildDefinition` makes (tests pass the one CDK synthesized). */
  definition?: AslDefinition;
  /** Binds the Repair state; built from the store and catalog when not given. */
  makeRepairHandler?: (deps: { store: RunStore; runners: readonly NodeRunner[] }) => RepairHandler;
  onWrite?: (write: StoreWrite) => void;
  /** Replaces the ASL retry intervals of runner states (tests); the policy (attempts, errors) stays. */
  retryIntervalMs?: number;
  executionLimits?: ExecutionLimits;
  /** Limits of runs and of the built-in runners (default: DEFAULT_LIMITS). */
  limits?: Limits;
  /** Step records the run item carries before they are written as their own items (see EngineDeps). */
  stepBatch?: number;
  now?: () => number;
  /** Randomness for run ids, owner ids and revisions; `cryptoIds` when not given. */
  ids?: Ids;
  /** The engine's caches; a new one per host when not given (tests pass one to observe it). */
  cache?: EngineCache;
}

/**
 * Records the run item carries before they are written as their own items, on a store without atomic
 * commits (a DynamoDB peer: one request per node instead of two). A store with `commitAdvance` (SQLite)
 * writes each record in the same transaction as the run item, so it keeps the run item small instead.
 */
export const LOCAL_STEP_BATCH = 32;

export interface StartOptions {
  workflow: Workflow;
  workflowName: string;
  params: Record<string, unknown>;
  repairEnabled: boolean;
  maxRepairs: number;
  runId?: string;
  /** Which AWS state machine the run belongs on; locally it only changes the execution limits. */
  mode?: 'express' | 'standard';
}

export type ResumeOptions = Omit<ClaimOptions, 'owner' | 'isAlive' | 'now'> & { force?: boolean };

/** What the host saw of the state machine: for benchmarks and the parity test. */
export interface HostStats {
  executions: number;
  transitions: number;
  tasks: Record<string, number>;
}

const noRepair: RepairHandler = async () => ({ applied: false, message: 'this host has no repair service' });

/** A local owner is this process; it is alive while its pid is, on this host. */
export const localOwner = (now: number, ids: Ids = cryptoIds): Owner => ({ id: `local-${process.pid}-${ids.hex(4)}`, pid: process.pid, host: hostname(), since: now });

export const isLocalOwnerAlive = async (owner: Owner): Promise<boolean> => {
  if (owner.pid === undefined || owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The embedded host (DESIGN section 7): runs the ASL definition in aws-local-stepfunctions with every
 * Task bound, by state name, to the same handler functions the Lambdas export.
 */
export class LocalHost {
  readonly store: ObservedRunStore;
  readonly stats: HostStats = { executions: 0, transitions: 0, tasks: {} };
  private readonly machine: StateMachine;
  private readonly handlers: Record<string, (input: never) => Promise<unknown>>;
  private readonly retryOverrides: Record<string, number>;
  private readonly now: () => number;
  private readonly ids: Ids;
  /** Runs whose execution ended in Continue: each drive loop starts the next execution of its own run (serve drives many at once). */
  private readonly continued = new Set<string>();

  constructor(private readonly options: LocalHostOptions) {
    this.now = options.now ?? Date.now;
    this.ids = options.ids ?? cryptoIds;
    this.store = new ObservedRunStore(options.store, options.onWrite);
    const runners = options.runners ?? (options.limits ? makeBuiltinRunners(options.limits) : builtinRunners);
    const catalog = makeCatalog(runners);
    const definition =
      options.definition ??
      buildDefinition({
        advance: 'arn:aws:lambda:us-east-1:000000000000:function:flowmend-advance',
        repair: 'arn:aws:lambda:us-east-1:000000000000:function:flowmend-repair',
        continueRun: 'arn:aws:states:::states:startExecution',
        runners: Object.fromEntries(runners.map((r) => [r.type, `arn:aws:lambda:us-east-1:000000000000:function:flowmend-run-${r.type}`])),
      });
    this.machine = new StateMachine(definition as unknown as StateMachineDefinition, { validationOptions: { noValidate: true } });
    const engineDeps = {
      store: this.store, catalog, now: this.now, ids: this.ids, cache: options.cache ?? new EngineCache(),
      ...(options.blobs ? { blobs: options.blobs } : {}),
      ...(options.executionLimits ? { executionLimits: options.executionLimits } : {}),
      stepBatch: options.stepBatch ?? (options.store.commitAdvance ? 1 : LOCAL_STEP_BATCH),
      ...(options.limits ? { runLimits: options.limits } : {}),
    };
    const repair = options.makeRepairHandler?.({ store: this.store, runners }) ?? noRepair;
    this.handlers = {
      [STATE.advance]: makeAdvanceHandler(engineDeps),
      [STATE.repair]: repair,
      [STATE.continueRun]: async (input: { Input?: { runId?: string } }) => {
        if (input.Input?.runId !== undefined) this.continued.add(input.Input.runId);
        return {};
      },
      ...Object.fromEntries(runners.map((r) => [runnerStateName(r.type), makeRunNodeHandler(r)])),
    };
    this.retryOverrides = options.retryIntervalMs === undefined ? {} : Object.fromEntries(runners.map((r) => [runnerStateName(r.type), options.retryIntervalMs as number]));
  }

  /** Creates a run and drives it to its end. */
  async start(spec: StartOptions): Promise<RunReport> {
    const now = this.now();
    const owner = localOwner(now, this.ids);
    const runId = spec.runId ?? newRunId(now, this.ids);
    await createRun(this.store, { ...spec, runId, owner, now });
    return this.drive(runId, owner.id);
  }

  /** Takes a stopped or failed run over and drives it on, replaying what is recorded. */
  async resume(runId: string, options: ResumeOptions = {}): Promise<RunReport> {
    const now = this.now();
    const owner = localOwner(now, this.ids);
    const { force, ...claim } = options;
    await claimRun(this.store, runId, { ...claim, owner, now, isAlive: force ? async () => false : isLocalOwnerAlive });
    return this.drive(runId, owner.id);
  }

  async report(runId: string): Promise<RunReport | undefined> {
    return loadRunReport(this.store, runId);
  }

  /**
   * Runs executions of the state machine for a run `owner` already holds, until the run stops continuing
   * as a new one or `signal` aborts (a cancel: the execution stops where it is, as StopExecution does on AWS).
   */
  async drive(runId: string, owner: string, signal?: AbortSignal): Promise<RunReport> {
    let input: Record<string, unknown> = { kind: 'start', runId, owner };
    for (;;) {
      if (signal?.aborted) break;
      this.continued.delete(runId);
      this.stats.executions += 1;
      const execution = this.machine.run(input as never, {
        overrides: { taskResourceLocalHandlers: this.countedHandlers() as never, retryIntervalOverrides: this.retryOverrides },
        // The Continue state reads $$.StateMachine.Id (the machine starts itself); the local interpreter has no context unless given one.
        context: { StateMachine: { Id: 'arn:aws:states:us-east-1:000000000000:stateMachine:flowmend-local', Name: 'flowmend-local' } },
        noThrowOnAbort: true,
      });
      const abort = () => execution.abort();
      signal?.addEventListener('abort', abort, { once: true });
      try {
        await execution.result;
      } catch (error) {
        if (!(error instanceof ExecutionError)) throw error;
        const cause = (error as ExecutionError & { cause?: { name?: string; message?: string } }).cause;
        if (cause?.name === 'StaleRunError') throw new StaleRunError(cause.message ?? `run ${runId} was taken over`);
        if (cause?.name !== undefined && !['RunFailed', STATE.unknown].includes(cause.name) && !(await this.isFailedRun(runId))) {
          throw new Error(`the local state machine failed: ${cause.name}: ${cause.message ?? ''}`, { cause: error });
        }
      } finally {
        signal?.removeEventListener('abort', abort);
      }
      // The execution ended in a Succeed or Fail state: one more transition.
      this.stats.transitions += 1;
      if (!this.continued.delete(runId)) break;
      input = { kind: 'start', runId, owner };
    }
    const report = await this.report(runId);
    if (!report) throw new Error(`run ${runId} vanished from the store`);
    return report;
  }

  private async isFailedRun(runId: string): Promise<boolean> {
    return (await this.store.getRun(runId))?.status === 'failed';
  }

  /** Task handlers that also count transitions: each Task entered is one, plus the Route Choice after Advance. */
  private countedHandlers(): Record<string, (input: never) => Promise<never>> {
    return Object.fromEntries(
      Object.entries(this.handlers).map(([state, handle]) => [
        state,
        async (input: never) => {
          this.stats.tasks[state] = (this.stats.tasks[state] ?? 0) + 1;
          // Advance is always followed by Route (a Choice).
          this.stats.transitions += state === STATE.advance ? 2 : 1;
          return (await handle(input)) as never;
        },
      ]),
    );
  }
}
