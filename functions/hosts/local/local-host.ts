import '../../adapters/node20-polyfills.ts';
import { hostname } from 'node:os';
import { ExecutionAbortedError, ExecutionError, StateMachine, type StateMachineDefinition } from 'aws-local-stepfunctions';
import { ObservedRunStore, type StoreWrite } from '../../adapters/observed-run-store.ts';
import { ObservingRunStore } from '../../adapters/observing-run-store.ts';
import type {
  BlobStore,
  CallbackSource,
  ExecutionLimits,
  FlowStore,
  MemoStore,
  Owner,
  RepairApproval,
  RepairReport,
  RunObserver,
  RunStore,
  SecretResolver,
  Wakeups,
  Workflow,
} from '../../core/index.ts';
import {
  type AslDefinition,
  buildDefinition,
  type ClaimOptions,
  chooseMode,
  claimRun,
  createRun,
  cryptoIds,
  DEFAULT_EXECUTION_LIMITS,
  DEFAULT_GRANT_MS,
  DEFAULT_LEASE_MARGIN_MS,
  DEFAULT_MEMO_TTL_S,
  EngineCache,
  type Ids,
  InvalidInputError,
  itemRunnerStateName,
  type LaunchRequest,
  type Limits,
  loadRunReport,
  MemoryFlowStore,
  makeCatalog,
  markInterrupted,
  type NodeCatalog,
  type NodeRunner,
  newRunId,
  parseTraceparent,
  RunIdSchema,
  type RunItem,
  type RunReport,
  recordItemStateName,
  rememberValidation,
  runnerStateName,
  STATE,
  StaleRunError,
  startRunTrace,
} from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import type { SpawnCommand } from '../../nodes/command-spawn.ts';
import { engineNodeSpecs } from '../../nodes/workflow.ts';
import { makeAdvanceHandler } from '../lambda/advance.ts';
import { makeMarkInterruptedHandler } from '../lambda/mark-interrupted.ts';
import { makeRunNodeHandler } from '../lambda/run-node.ts';
import { AWS_LIMITS, type AwsLimits, type ExecutionDeath, ExecutionGuard, stateOutput } from './aws-limits.ts';
import { CancelWatch } from './cancel-watch.ts';
import { type DefinitionMemo, definitionKey } from './definition-memo.ts';
import { makeScalarReadsCheap } from './jsonpath-scalars.ts';
import { makeSimplePathsCheap } from './jsonpath-simple-paths.ts';
import { localRunners, localRunnersWithin } from './local-runners.ts';
import { TurnSlicer } from './turn-slicer.ts';

export type RepairHandler = (event: unknown) => Promise<RepairReport>;

let awsSecrets: SecretResolver | undefined;
/** Secrets Manager and SSM with the default credentials, loaded only when a run reads a secret input (`from`). */
const lazyAwsSecrets: SecretResolver = {
  resolve: async (source) => {
    awsSecrets ??= new (await import('../../adapters/aws-secret-resolver.ts')).AwsSecretResolver();
    return awsSecrets.resolve(source);
  },
};

/** How long the runs a host drives hold its thread before a step lets the event loop turn (serve's API answers between). */
const TURN_SLICE_MS = 10;

/** A cancel from another process stops the node in flight within this (one run-item read per period while a node runs). */
const CANCEL_POLL_MS = 500;

export interface LocalHostOptions {
  store: RunStore;
  /** How often a running node checks whether its run was cancelled from another process (default 500 ms). */
  cancelPollMs?: number;
  /** Where runners put outputs too large for a state payload (the same path as S3 presigned uploads on AWS). */
  blobs?: BlobStore;
  /**
   * Removes a run's blobs that no commit refers to (BlobOffloadRunStore.removeOrphanBlobs), called once this
   * process holds the run, before it drives it: what a failed commit left is gone before the resume needs the room.
   */
  removeOrphanBlobs?: (runId: string) => Promise<unknown>;
  runners?: readonly NodeRunner[];
  /** How the built-in shell runner starts commands (serve: its command helper); ignored with `runners`. */
  spawnCommand?: SpawnCommand;
  /** The ASL to run; by default the one `buildDefinition` makes (tests pass the one CDK synthesized). */
  definition?: AslDefinition;
  /** Binds the Repair state; built from the store and catalog when not given. */
  makeRepairHandler?: (deps: { store: RunStore; runners: readonly NodeRunner[] }) => RepairHandler;
  onWrite?: (write: StoreWrite) => void;
  /** Replaces the ASL retry intervals of runner states (tests); the policy (attempts, errors) stays. */
  retryIntervalMs?: number;
  executionLimits?: ExecutionLimits;
  /** Limits of runs and of the built-in runners (default: DEFAULT_LIMITS). */
  runLimits?: Limits;
  /** Step records the run item carries before they are written as their own items (see EngineDeps). */
  stepBatch?: number;
  /** pflow's memo cache (results reused across runs), and for how long; none without it. */
  memo?: MemoStore;
  memoTtlS?: number;
  now?: () => number;
  /** Randomness for run ids, owner ids and revisions; `cryptoIds` when not given. */
  ids?: Ids;
  /** The engine's caches; a new one per host when not given (tests pass one to observe it, the CLI one that holds the IR it read). */
  cache?: EngineCache;
  /**
   * Validate the definition as Step Functions does on deploy (default true): an invalid one is refused
   * before any execution starts.
   */
  validateDefinition?: boolean;
  /** Definitions validated before (the CLI keeps them in the state dir): one found in it is not validated again. */
  validatedDefinitions?: DefinitionMemo;
  /** AWS's limits (payload size, Express duration, history length); tests shrink or keep them. */
  limits?: Partial<AwsLimits>;
  /**
   * Called by the Continue state with the StartExecution request before the next execution is started:
   * tests make it throw errors named as Step Functions names them (`StepFunctions.ThrottlingException`).
   */
  onStartExecution?: (request: StartExecutionRequest) => Promise<void> | void;
  /** Reads secret inputs (`from`) for the runners; Secrets Manager and SSM with the default credentials when not given. */
  secrets?: SecretResolver;
  /** Given each execution's event log (state inputs and outputs, as Step Functions' history has them): tests read it. */
  observeExecution?: (eventLogs: AsyncIterable<unknown>) => void;
  /**
   * Told what runs do (hosts/telemetry): traces, metrics, logs. `traced`: runs started here get a trace
   * even without a caller's traceparent. Without it nothing observes, at no cost.
   */
  telemetry?: { observer: RunObserver; traced: boolean };
  /** The callback key and URL for wait-for-event nodes (DESIGN 7b); without it such a node fails, saying so. */
  callbacks?: CallbackSource;
  /** Schedules wake-ups of waiting runs; `serve` needs none (it reads due waits from the store). */
  wakeups?: Wakeups;
  /**
   * Flow control's keys (docs/flow-control.md), shared by every process that uses the same store; one in this
   * process's memory when not given (tests). `leaseMarginMs`: how long after a holder was last heard of its slots free.
   */
  flow?: { store: FlowStore; leaseMarginMs?: number; grantMs?: number };
}

/** An execution that continues a waiting run (waits/claim-wake.ts): the wait it answers, and the owner as the launcher made it. */
export interface WakeOptions {
  waitId: string;
  holder?: Owner;
}

/** What the Continue state sends to `arn:aws:states:::states:startExecution` (its Parameters, evaluated). */
export const StartExecutionRequestSchema = z.object({
  StateMachineArn: z.string().check(z.startsWith('arn:')),
  Name: z.string().check(z.regex(/^[A-Za-z0-9._-]{1,80}$/, 'an execution name is 1-80 letters, digits, . _ or -')),
  Input: z.object({ runId: RunIdSchema, owner: z.string().check(z.minLength(1)), kind: z.literal('start') }),
});
export type StartExecutionRequest = z.infer<typeof StartExecutionRequestSchema>;

/** An error Step Functions would report under `name` (a thrown error's name is its Error locally). */
export class StepFunctionsError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
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
  /** pflow's `--no-cache`: the run reads no memo-cache entry (and still writes them). */
  noCache?: boolean;
  runId?: string;
  /** Which AWS state machine the run belongs on; locally it only changes the execution limits. */
  mode?: 'express' | 'standard';
  /** Where file nodes resolve relative paths; the directory the run was started from by default. */
  workspace?: string;
  /** The W3C traceparent of whoever started the run (`TRACEPARENT` of the CLI): the run joins that trace. */
  traceparent?: string;
  /** Gated nodes approved in advance, and the run's own repair approval policy (DESIGN 7b). */
  autoApprove?: string[];
  repairApproval?: RepairApproval;
}

export type ResumeOptions = Omit<ClaimOptions, 'owner' | 'isAlive' | 'now' | 'trace'> & { force?: boolean; traceparent?: string };

/** What the host saw of the state machine: for benchmarks and the parity test. */
export interface HostStats {
  executions: number;
  transitions: number;
  tasks: Record<string, number>;
}

const noRepair: RepairHandler = async () => ({ applied: false, message: 'this host has no repair service' });

/** A local owner is this process; it is alive while its pid is, on this host. */
export const localOwner = (now: number, ids: Ids = cryptoIds): Owner => ({
  id: `local-${process.pid}-${ids.hex(4)}`,
  pid: process.pid,
  host: hostname(),
  since: now,
});

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
  private readonly limits: AwsLimits;
  private readonly definition: AslDefinition;
  private readonly startedNames = new Set<string>();
  /** Why the last execution died, if it hit one of AWS's limits. */
  lastDeath: ExecutionDeath | undefined;
  private readonly ids: Ids;
  private readonly cache: EngineCache;
  /** The input of the execution each Continue state started, by owner: one chain of executions per owner (serve drives many runs at once), and a continue may name a child run of the run being driven. */
  private readonly next = new Map<string, Record<string, unknown>>();
  /** The node types this host runs (every builtin and the file family): what `serve` checks workflows against. */
  readonly catalog: NodeCatalog;
  private readonly cancels: CancelWatch;
  private readonly runnerStates: ReadonlySet<string>;
  private readonly slicer = new TurnSlicer(TURN_SLICE_MS);

  constructor(private readonly options: LocalHostOptions) {
    this.now = options.now ?? Date.now;
    this.ids = options.ids ?? cryptoIds;
    this.limits = { ...AWS_LIMITS, ...options.limits };
    const observed = options.telemetry ? new ObservingRunStore(options.store, options.telemetry.observer) : options.store;
    this.store = new ObservedRunStore(observed, options.onWrite);
    this.cache = options.cache ?? new EngineCache();
    const runners = options.runners ?? (options.runLimits || options.spawnCommand ? localRunnersWithin(options.runLimits, options.spawnCommand) : localRunners);
    // The workflow node has no runner: the engine runs it (a child run), so it joins the catalog, not the runners.
    const catalog = makeCatalog([...runners, ...engineNodeSpecs]);
    this.catalog = catalog;
    const definition =
      options.definition ??
      buildDefinition({
        advance: 'arn:aws:lambda:us-east-1:000000000000:function:flowmend-advance',
        repair: 'arn:aws:lambda:us-east-1:000000000000:function:flowmend-repair',
        continueRun: 'arn:aws:states:::states:startExecution',
        interrupted: 'arn:aws:lambda:us-east-1:000000000000:function:flowmend-mark-interrupted',
        runners: Object.fromEntries(runners.map((r) => [r.type, `arn:aws:lambda:us-east-1:000000000000:function:flowmend-run-${r.type}`])),
      });
    this.definition = definition;
    makeScalarReadsCheap();
    makeSimplePathsCheap();
    const memo = options.validateDefinition === false ? undefined : options.validatedDefinitions;
    const key = memo ? definitionKey(definition) : undefined;
    const validate = options.validateDefinition !== false && !(key !== undefined && memo?.has(key));
    // The constructor throws for an invalid definition, so only a definition that passed is remembered.
    this.machine = new StateMachine(definition as unknown as StateMachineDefinition, { validationOptions: { noValidate: !validate } });
    if (validate && key !== undefined) memo?.add(key);
    const engineDeps = {
      store: this.store,
      catalog,
      now: this.now,
      ids: this.ids,
      cache: this.cache,
      ...(options.blobs ? { blobs: options.blobs } : {}),
      // The limits AWS runs with, so that a run continues locally where it would continue on AWS.
      executionLimits: options.executionLimits ?? DEFAULT_EXECUTION_LIMITS,
      stepBatch: options.stepBatch ?? (options.store.commitAdvance ? 1 : LOCAL_STEP_BATCH),
      ...(options.runLimits ? { runLimits: options.runLimits } : {}),
      ...(options.memo && options.memoTtlS !== 0 ? { memo: { store: options.memo, ttlS: options.memoTtlS ?? DEFAULT_MEMO_TTL_S } } : {}),
      ...(options.callbacks ? { callbacks: options.callbacks } : {}),
      ...(options.wakeups ? { wakeups: options.wakeups } : {}),
      flow: {
        store: options.flow?.store ?? new MemoryFlowStore(),
        leaseMarginMs: options.flow?.leaseMarginMs ?? DEFAULT_LEASE_MARGIN_MS,
        grantMs: options.flow?.grantMs ?? DEFAULT_GRANT_MS,
        // aws-local-stepfunctions waits to the millisecond of a Wait state's timestamp.
        timerQuantumMs: 1,
      },
    };
    const repair = options.makeRepairHandler?.({ store: this.store, runners }) ?? noRepair;
    this.cancels = new CancelWatch(this.store, options.cancelPollMs ?? CANCEL_POLL_MS);
    const runNode = (runner: NodeRunner) => makeRunNodeHandler(runner, { secrets: options.secrets ?? lazyAwsSecrets, signal: this.cancels.signal });
    this.runnerStates = new Set(runners.flatMap((r) => [runnerStateName(r.type), itemRunnerStateName(r.type)]));
    this.handlers = {
      [STATE.advance]: makeAdvanceHandler(engineDeps),
      [STATE.checkRun]: makeAdvanceHandler(engineDeps),
      [STATE.repair]: repair,
      [STATE.continueRun]: (request: unknown) => this.startExecution(request),
      [STATE.interrupted]: makeMarkInterruptedHandler({ store: this.store, now: this.now }),
      ...Object.fromEntries(runners.map((r) => [runnerStateName(r.type), runNode(r)])),
      // Inside a batch's Map: each item on its type's runner, then its record by the engine's handler.
      ...Object.fromEntries(runners.map((r) => [itemRunnerStateName(r.type), runNode(r)])),
      ...Object.fromEntries(runners.map((r) => [recordItemStateName(r.type), makeAdvanceHandler(engineDeps)])),
    };
    this.retryOverrides =
      options.retryIntervalMs === undefined
        ? {}
        : Object.fromEntries(
            [
              ...runners.flatMap((r) => [runnerStateName(r.type), itemRunnerStateName(r.type), recordItemStateName(r.type)]),
              STATE.continueRun,
              STATE.advance,
              STATE.checkRun,
              STATE.repair,
              STATE.interrupted,
            ].map((state) => [state, options.retryIntervalMs as number]),
          );
  }

  /** Creates a run and drives it to its end. */
  async start(spec: StartOptions): Promise<RunReport> {
    const now = this.now();
    const owner = localOwner(now, this.ids);
    const runId = spec.runId ?? newRunId(now, this.ids);
    // As StartRun does on AWS: Express unless a node may run longer than an Express execution can wait.
    const mode = spec.mode ?? chooseMode(spec.workflow, this.catalog);
    const { traceparent, ...rest } = spec;
    const trace = startRunTrace({ caller: parseTraceparent(traceparent), traced: this.options.telemetry?.traced ?? false, now, ids: this.ids });
    const run = await createRun(this.store, { ...rest, mode, runId, owner, now, workspace: spec.workspace ?? process.cwd(), trace, ids: this.ids });
    this.adoptCreated(run, spec.workflow);
    return this.driveAs(runId, owner.id, mode, run.rev);
  }

  /** Takes a stopped or failed run over and drives it on, replaying what is recorded. */
  async resume(runId: string, options: ResumeOptions = {}): Promise<RunReport> {
    const now = this.now();
    const owner = localOwner(now, this.ids);
    const { force, traceparent, ...claim } = options;
    const run = await claimRun(this.store, runId, {
      ...claim,
      owner,
      now,
      isAlive: force ? async () => false : isLocalOwnerAlive,
      trace: { caller: parseTraceparent(traceparent), traced: this.options.telemetry?.traced ?? false },
      ids: this.ids,
    });
    // The run item as the claim wrote it: the first Advance takes it from the cache (its rev proves it
    // current) instead of reading and parsing it again.
    this.cache.rememberRun(run);
    await this.removeOrphanBlobs(runId);
    return this.driveAs(runId, owner.id, run.mode, run.rev);
  }

  /** Continues a waiting run whose wait is due or answered, in this process (`flowmend approve`, `resume` of a due wait). */
  async wake(runId: string, waitId: string): Promise<RunReport> {
    const owner = localOwner(this.now(), this.ids);
    return this.drive(runId, owner.id, undefined, { waitId, holder: owner });
  }

  async report(runId: string): Promise<RunReport | undefined> {
    return loadRunReport(this.store, runId);
  }

  /**
   * Runs executions of the state machine for a run `owner` already holds, until the run stops continuing
   * as a new one or `signal` aborts (a cancel: the execution stops where it is, as StopExecution does on
   * AWS). An execution that hits one of AWS's limits dies as it would on AWS, and the run is marked
   * interrupted (resumable) as the stack's watcher marks it there.
   */
  async drive(runId: string, owner: string, signal?: AbortSignal, wake?: WakeOptions): Promise<RunReport> {
    await this.removeOrphanBlobs(runId);
    return this.driveAs(runId, owner, (await this.store.getRun(runId))?.mode ?? 'express', undefined, signal, wake);
  }

  /**
   * `drive` for a launcher (`serve`): the mode as the request says it; a run the request created is driven
   * on the workflow it was created with (not read back) and has no blobs to clear. Returns what the run
   * became (its status), not its report, which serve's launcher does not read.
   */
  async driveLaunched(request: LaunchRequest, signal?: AbortSignal): Promise<RunItem['status'] | undefined> {
    const { created, resumed } = request;
    if (created) {
      this.adoptCreated(created.run, created.workflow);
      if (created.issues) rememberValidation(created.workflow, this.catalog, created.issues);
    } else await this.removeOrphanBlobs(request.runId);
    if (resumed) this.adoptResumed(resumed);
    // The records a resume's patch check listed, for its walk; any launch without them forgets a listing left by an
    // earlier one whose execution stopped before its walk.
    this.cache.rememberListing(request.runId, resumed?.run.rev, resumed?.listed);
    const wake = request.waitId === undefined ? undefined : { waitId: request.waitId, holder: request.owner };
    await this.execute(request.runId, request.owner.id, request.mode, (created ?? resumed)?.run.rev, signal, wake);
    return (await this.store.getRun(request.runId))?.status;
  }

  /**
   * A run created in this process and its version 0, handed to the engine's cache as the first Advance would read
   * them back: neither is read and parsed again (the item's rev proves it current), and the workflow's validation
   * before the run, the same object, counts for the Advance's (validate.ts).
   */
  private adoptCreated(run: RunItem, workflow: Workflow): void {
    this.cache.rememberIr(run.runId, 0, workflow);
    this.cache.rememberRun(run);
  }

  /** A run claimed for a resume in this process, and the patched version its claim wrote, handed over as a created run's are. */
  private adoptResumed({ run, patched }: NonNullable<LaunchRequest['resumed']>): void {
    if (patched) this.cache.rememberIr(run.runId, run.irVersion, patched);
    this.cache.rememberRun(run);
  }

  /**
   * What a commit that failed left behind, removed once this process holds the run (a resume, a takeover, a
   * wake), before it drives it: the resume needs the room. A run created just now has none, so `start`
   * skips it (and the directory listing it costs). Cleanup only: blobs it could not remove cost room, never the run.
   */
  private async removeOrphanBlobs(runId: string): Promise<void> {
    await this.options.removeOrphanBlobs?.(runId).catch(() => undefined);
  }

  /** `drive` for a run whose mode the caller knows, and whose item is in the cache at `rev` when given. */
  private async driveAs(
    runId: string,
    owner: string,
    mode: 'express' | 'standard',
    rev?: string,
    signal?: AbortSignal,
    wake?: WakeOptions,
  ): Promise<RunReport> {
    await this.execute(runId, owner, mode, rev, signal, wake);
    const report = await this.report(runId);
    if (!report) throw new Error(`run ${runId} vanished from the store`);
    return report;
  }

  /** The executions of `drive`, one after another while the run continues as a new one. */
  private async execute(runId: string, owner: string, mode: 'express' | 'standard', rev?: string, signal?: AbortSignal, wake?: WakeOptions): Promise<void> {
    let input: Record<string, unknown> = wake
      ? { kind: 'wake', runId, owner, waitId: wake.waitId, ...(wake.holder ? { holder: wake.holder } : {}) }
      : { kind: 'start', runId, owner, ...(rev === undefined ? {} : { rev }) };
    this.lastDeath = undefined;
    for (;;) {
      if (signal?.aborted) break;
      this.next.delete(owner);
      this.stats.executions += 1;
      const guard = new ExecutionGuard(this.limits, mode, this.now(), this.now);
      const death = guard.checkInput(input) ?? (await this.runExecution(runId, input, guard, signal));
      if (death) {
        this.lastDeath = death;
        await markInterrupted(this.store, runId, { stoppedAt: this.now(), code: death.error, message: `${death.state}: ${death.cause}`, now: this.now() });
        break;
      }
      // The execution ended in a Succeed or Fail state: one more transition.
      this.stats.transitions += 1;
      const next = this.next.get(owner);
      this.next.delete(owner);
      if (!next) break;
      input = next;
    }
  }

  /** One execution; returns why it died if it hit an AWS limit. */
  private async runExecution(runId: string, input: Record<string, unknown>, guard: ExecutionGuard, signal?: AbortSignal): Promise<ExecutionDeath | undefined> {
    let abort: () => void = () => undefined;
    const execution = this.machine.run(input as never, {
      overrides: { taskResourceLocalHandlers: this.guardedHandlers(guard, () => abort()) as never, retryIntervalOverrides: this.retryOverrides },
      // The Continue state reads $$.StateMachine.Id (the machine starts itself); the local interpreter has no context unless given one.
      context: { StateMachine: { Id: LOCAL_STATE_MACHINE_ARN, Name: 'flowmend-local' } },
      ...(this.options.observeExecution ? {} : NO_EVENT_LOG),
    });
    this.options.observeExecution?.(execution.eventLogs);
    abort = () => execution.abort();
    // A cancel stops the node in flight (its Advance then records what the node did and ends the execution),
    // or, between nodes, the execution where it is, as StopExecution does on AWS.
    const cancel = (): void => {
      this.cancels.stop(runId);
      if (!this.cancels.busy(runId)) abort();
    };
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      await execution.result;
    } catch (error) {
      if (error instanceof ExecutionAbortedError) {
        if (guard.death) return guard.death;
        if (signal?.aborted) return undefined;
      }
      if (!(error instanceof ExecutionError)) throw error;
      const cause = (error as ExecutionError & { cause?: { name?: string; message?: string } }).cause;
      if (cause?.name === 'StaleRunError') throw new StaleRunError(cause.message ?? `run ${runId} was taken over`);
      // A store that stayed unavailable through the retries (a full disk): the run stops resumable, as the
      // stack's watcher marks it on AWS, with the store's own message, instead of staying `running`.
      if (cause?.name === 'StoreUnavailableError') {
        const now = this.now();
        await markInterrupted(this.store, runId, { stoppedAt: now, code: cause.name, message: cause.message ?? '', now });
        return undefined;
      }
      const ends = ['RunFailed', 'RunInterrupted', STATE.unknown];
      if (cause?.name !== undefined && !ends.includes(cause.name) && !(await this.isFailedRun(runId))) {
        throw new Error(`the local state machine failed: ${cause.name}: ${cause.message ?? ''}`, { cause: error });
      }
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
    return undefined;
  }

  /** The Continue state's integration: checks the request as StartExecution would and starts the next execution. */
  private async startExecution(raw: unknown): Promise<{ ExecutionArn: string; StartDate: string }> {
    const parsed = StartExecutionRequestSchema.safeParse(raw);
    if (!parsed.success) {
      throw new InvalidInputError(
        `StartExecution request is not one Step Functions accepts: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    }
    const request = parsed.data;
    await this.options.onStartExecution?.(request);
    if (this.startedNames.has(request.Name)) {
      throw new StepFunctionsError('StepFunctions.ExecutionAlreadyExistsException', `Execution already exists: '${request.Name}'`);
    }
    this.startedNames.add(request.Name);
    this.next.set(request.Input.owner, request.Input);
    return {
      ExecutionArn: `${LOCAL_STATE_MACHINE_ARN.replace(':stateMachine:', ':execution:')}:${request.Name}`,
      StartDate: new Date(this.now()).toISOString(),
    };
  }

  private async isFailedRun(runId: string): Promise<boolean> {
    const status = (await this.store.getRun(runId))?.status;
    return status === 'failed' || status === 'cancelled';
  }

  /**
   * Task handlers that count transitions (each Task entered is one, plus the Route Choice after Advance)
   * and check AWS's limits on what each state would output; past one, the execution is aborted there.
   */
  private guardedHandlers(guard: ExecutionGuard, abort: () => void): Record<string, (input: never) => Promise<never>> {
    return Object.fromEntries(
      Object.entries(this.handlers).map(([state, handle]) => [
        state,
        async (input: never) => {
          const turn = this.slicer.pass();
          if (turn) await turn;
          this.stats.tasks[state] = (this.stats.tasks[state] ?? 0) + 1;
          this.stats.transitions += state === STATE.advance || state === STATE.checkRun ? 2 : 1;
          const event = input as { runId?: string; owner?: string };
          const result =
            this.runnerStates.has(state) && event.runId !== undefined && event.owner !== undefined
              ? await this.cancels.watch(event.runId, event.owner, event, () => handle(input))
              : await handle(input);
          const spec = this.definition.States[state] ?? {};
          const output = stateOutput(input, result, 'ResultPath' in spec ? (spec.ResultPath as string | null) : undefined);
          if (state === STATE.advance) guard.choice();
          if (guard.afterTask(state, output)) {
            abort();
            // The execution is dead: nothing may follow this state (the abort settles the execution's result).
            return new Promise<never>(() => undefined);
          }
          return result as never;
        },
      ]),
    );
  }
}

export const LOCAL_STATE_MACHINE_ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:flowmend-local';

/**
 * The run option by which an execution keeps no event log in the CLI's bundles (scripts/interpreter-patches.mjs,
 * whose EVENT_LOG_OFF a test holds this to): aws-local-stepfunctions otherwise queues each state's entry and exit
 * with its payloads until the execution ends, whether or not anyone reads them. Passed when no `observeExecution`
 * reads the log; run from source, the library ignores it.
 */
export const NO_EVENT_LOG = { eventLog: 'off' } as const;
