import { randomBytes } from 'node:crypto';
import {
  DescribeExecutionCommand,
  ExecutionAlreadyExists,
  ExecutionDoesNotExist,
  type SFNClient,
  StartExecutionCommand,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import type { LaunchRequest, Owner, RunLauncher, RunStore } from '../core/index.ts';
import { ownerExecutionName, runIdOfOwnerName, StoreUnavailableError } from '../core/index.ts';

export type RunMode = 'express' | 'standard';

/**
 * How long after the run item's last write a run whose execution cannot be described still counts as
 * alive. Express: an execution lives at most 5 minutes and every execution writes the run item before
 * its first node, so one minute of slack over that is safe. Standard: only a run that continued as a
 * new execution (after ~1,000 steps) lands here; a node may run 15 minutes per try, with retries.
 */
export const DEFAULT_HEARTBEAT_MS: Readonly<Record<RunMode, number>> = { express: 6 * 60_000, standard: 60 * 60_000 };

export interface SfnRunLauncherOptions {
  sfn: SFNClient;
  store: RunStore;
  stateMachines: Readonly<Record<RunMode, string>>;
  now: () => number;
  heartbeatMs?: Readonly<Record<RunMode, number>>;
}

/**
 * Owner ids double as execution names (core's execution-names.ts), so the first execution of an owner is
 * known from the owner alone, and each resume gets a new name.
 */
export const sfnOwnerId = (runId: string): string => ownerExecutionName(runId, randomBytes(4).toString('hex'));

/** The run an owner id made by `sfnOwnerId` belongs to. */
export const runIdOfOwner = (ownerId: string): string | undefined => runIdOfOwnerName(ownerId);

/** `arn:...:stateMachine:M` + name -> `arn:...:execution:M:name` (the ARN a Standard execution gets). */
export const standardExecutionArn = (stateMachineArn: string, name: string): string => `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${name}`;

/**
 * Runs flowmend runs as Step Functions executions (the AWS `RunLauncher`). Each launch starts a new
 * execution of the run's machine named after its owner. Liveness: DescribeExecution for Standard; for
 * Express (which cannot be described) the run item's owner and the age of its last write.
 */
export class SfnRunLauncher implements RunLauncher {
  private readonly heartbeatMs: Readonly<Record<RunMode, number>>;

  constructor(private readonly options: SfnRunLauncherOptions) {
    this.heartbeatMs = options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS;
  }

  newOwner(runId: string, now: number): Owner {
    return { id: sfnOwnerId(runId), since: now };
  }

  /** Starts the execution; a second launch of the same owner (a retried request) starts nothing more. */
  async launch(request: LaunchRequest): Promise<void> {
    const input = JSON.stringify(
      request.waitId === undefined
        ? { kind: 'start', runId: request.runId, owner: request.owner.id }
        : { kind: 'wake', runId: request.runId, owner: request.owner.id, waitId: request.waitId, holder: request.owner },
    );
    try {
      // Standard answers a repeated name with the same input with the first execution; Express would start
      // a second one, so callers launch an owner once (a retried API request finds its run by idempotency key).
      await this.options.sfn.send(new StartExecutionCommand({ stateMachineArn: this.options.stateMachines[request.mode], name: request.owner.id, input }));
    } catch (error) {
      if (error instanceof ExecutionAlreadyExists) return;
      throw new StoreUnavailableError(`could not start an execution of run ${request.runId}: ${describe(error)}`, { cause: error });
    }
  }

  async isAlive(owner: Owner): Promise<boolean> {
    const runId = runIdOfOwner(owner.id);
    // An owner this launcher did not name (a laptop's process) has no execution here to wait for.
    if (runId === undefined) return false;
    const run = await this.options.store.getRun(runId);
    if (!run || run.owner?.id !== owner.id || run.status !== 'running') return false;
    const status = await this.standardStatus(owner.id);
    if (status === 'RUNNING' || status === 'PENDING_REDRIVE') return true;
    if (status === 'FAILED' || status === 'TIMED_OUT' || status === 'ABORTED') return false;
    // SUCCEEDED while the run is still running: it continued as an execution with a generated name.
    const mode: RunMode = status === undefined ? 'express' : 'standard';
    return this.options.now() - run.updatedAt < this.heartbeatMs[mode];
  }

  /**
   * Stops a Standard execution still running for `owner`. Express executions cannot be stopped by ARN:
   * the caller's conditional write (cancel or takeover) makes their next Advance stop them.
   */
  async stop(owner: Owner): Promise<void> {
    const arn = standardExecutionArn(this.options.stateMachines.standard, owner.id);
    if ((await this.standardStatus(owner.id)) !== 'RUNNING') return;
    try {
      await this.options.sfn.send(new StopExecutionCommand({ executionArn: arn, error: 'RunCancelled', cause: 'stopped through the flowmend API' }));
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return;
      throw new StoreUnavailableError(`could not stop execution ${arn}: ${describe(error)}`, { cause: error });
    }
  }

  /** Status of the Standard execution named after the owner; undefined when there is none (an Express run). */
  private async standardStatus(name: string): Promise<string | undefined> {
    const executionArn = standardExecutionArn(this.options.stateMachines.standard, name);
    try {
      const { status } = await this.options.sfn.send(new DescribeExecutionCommand({ executionArn }));
      return status;
    } catch (error) {
      if (error instanceof ExecutionDoesNotExist) return undefined;
      throw new StoreUnavailableError(`could not describe execution ${executionArn}: ${describe(error)}`, { cause: error });
    }
  }
}

const describe = (error: unknown): string => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
