import type { Workflow } from './ir.ts';
import type { NodeRecord, Owner, RunItem } from './run-model.ts';
import type { ValidationIssue } from './validate.ts';

/** A run whose item names `owner`: the launcher starts the execution that advances it. */
export interface LaunchRequest {
  runId: string;
  owner: Owner;
  mode: 'express' | 'standard';
  /** Continue a waiting run after this wait (its first step claims it, waits/claim-wake.ts), instead of starting it. */
  waitId?: string;
  /**
   * The run was created by this request (createRun: the item it wrote, with this workflow as its version 0):
   * a launcher in the caller's process hands both to the engine instead of having them read back and the
   * workflow validated again, and knows that no earlier attempt left anything behind. `issues`: what validating
   * the workflow found where it was created, which a launcher in another thread of the process (serve's
   * workers) records for its copy (validate.ts rememberValidation) instead of validating it again.
   */
  created?: { run: RunItem; workflow: Workflow; issues?: readonly ValidationIssue[] };
  /**
   * The run was claimed by this request for a resume (claimRun: the item it wrote) and, with a patch, the
   * workflow version the claim wrote (the run's `irVersion`): handed over as `created` is, so that the run's
   * first step reads neither back (a resume walks its records; it does not validate the workflow again).
   * `listed`: the run's records as the patch check listed them before the claim, which the walk takes
   * instead of listing them again (EngineCache.rememberListing: only while the run is at the claimed rev).
   */
  resumed?: { run: RunItem; patched?: Workflow; listed?: readonly NodeRecord[] };
}

/**
 * Starts and stops the executions that advance runs: locally the serve process drives them in the
 * background; on AWS each is a Step Functions execution. The API writes the run (create, claim, cancel);
 * the launcher only runs it.
 */
export interface RunLauncher {
  /** A fresh owner for a run this launcher is about to start or resume. */
  newOwner(runId: string, now: number): Owner;
  /** Starts an execution of a run already written with `owner`; returns once it is started, not finished. */
  launch(request: LaunchRequest): Promise<void>;
  /** Whether the execution behind `owner` may still advance its run. */
  isAlive(owner: Owner): Promise<boolean>;
  /** Stops the execution behind `owner` when it is still going; a no-op otherwise. */
  stop(owner: Owner): Promise<void>;
}
