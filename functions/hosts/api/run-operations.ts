import { createHash } from 'node:crypto';
import type { CancelFlow, IrVersionItem, NodeRecord, RunItem } from '../../core/index.ts';
import {
  awaitCancelledStep,
  type CancelOutcome,
  type CancelResult,
  cancelOutcomeOf,
  cancelRun,
  checkRunPatch,
  claimRun,
  createRun,
  DEFAULT_GRANT_MS,
  DEFAULT_MAX_REPAIRS,
  IDEMPOTENCY_TTL_MS,
  type NewRun,
  newRunId,
  parseTraceparent,
  StaleRunError,
  startRunTrace,
  validateWorkflow,
} from '../../core/index.ts';
import type { ApiDeps } from './api-deps.ts';
import { ApiError, notFound } from './api-error.ts';
import type { ResumeBody, StartRunBody } from './api-schemas.ts';
import { workflowFromField } from './markdown-workflow.ts';
import { ParsedWorkflows } from './parsed-workflows.ts';
import { prepareStart } from './prepare-start.ts';
import { withRegisteredChildren } from './registered-children.ts';
import { continueWaitingRun } from './wait-operations.ts';

export interface StartedRun {
  runId: string;
  workflowName: string;
  workflowVersion?: number;
  /** The run an earlier request with the same Idempotency-Key started. */
  replayed: boolean;
}

/** The workflows this process started runs from, parsed (a batch of runs of one workflow parses it once). */
export const startedWorkflows = new ParsedWorkflows();

/**
 * Starts a run: resolves the workflow, checks it like the CLI, claims the idempotency key (a conditional
 * insert, so concurrent retries get the first run), writes the run and hands it to the launcher. A key
 * whose run was never written (its request died after the claim) gets that run from the next retry.
 */
export const startRun = async (deps: ApiDeps, body: StartRunBody, idempotencyKey?: string, traceparent?: string): Promise<StartedRun> => {
  let raw: unknown = await workflowFromField(body.workflow);
  let workflowName = body.name;
  let workflowVersion: number | undefined;
  if (body.workflow_name !== undefined) {
    const registered = await deps.registry.getWorkflow(body.workflow_name, body.version);
    if (!registered) throw notFound(`workflow '${body.workflow_name}'${body.version === undefined ? '' : ` version ${body.version}`}`);
    raw = registered.workflow;
    workflowName = registered.name;
    workflowVersion = registered.version;
  }
  // Children named by workflow_name are read from the registry now and frozen into the run's first version.
  raw = await withRegisteredChildren(deps.registry, raw, workflowName, (workflow) => startedWorkflows.parse(workflow));
  const prepared = prepareStart(
    {
      workflow: raw,
      workflowName,
      params: body.params,
      repairEnabled: body.repair,
      maxRepairs: body.max_repairs ?? DEFAULT_MAX_REPAIRS,
      mode: body.mode,
      autoApprove: body.auto_approve,
      repairApproval: body.repair_approval,
    },
    deps.catalog,
  );
  const now = deps.now();
  const runId = newRunId(now);
  const result = (id: string, replayed: boolean): StartedRun => ({
    runId: id,
    workflowName: prepared.workflowName,
    ...(workflowVersion === undefined ? {} : { workflowVersion }),
    replayed,
  });
  const spec = {
    workflow: prepared.workflow,
    workflowName: prepared.workflowName,
    params: prepared.params,
    repairEnabled: prepared.repairEnabled,
    maxRepairs: prepared.maxRepairs,
    ...(body.no_cache ? { noCache: true } : {}),
    mode: prepared.mode,
    now,
    ...(prepared.autoApprove ? { autoApprove: prepared.autoApprove } : {}),
    ...(prepared.repairApproval ? { repairApproval: prepared.repairApproval } : {}),
    ...(workflowVersion === undefined ? {} : { workflowVersion }),
    ...(deps.workspace === undefined ? {} : { workspace: deps.workspace }),
    trace: startRunTrace({ caller: parseTraceparent(traceparent), traced: deps.traced ?? false, now }),
  };
  let claimedRunId: string | undefined;
  if (idempotencyKey !== undefined) {
    const keep = { createdAt: now, expiresAt: now + IDEMPOTENCY_TTL_MS };
    // The body's own claim comes first and names the run this body starts: a retry of the same body finds
    // the key naming that run; another body finds another (422), however the requests interleave or die.
    const forBody = await deps.registry.claimIdempotencyKey({ key: bodyKey(idempotencyKey, body), runId, ...keep }, now);
    const bodyRun = forBody.claimed ? runId : forBody.runId;
    const claim = await deps.registry.claimIdempotencyKey({ key: idempotencyKey, runId: bodyRun, ...keep }, now);
    claimedRunId = claim.claimed ? bodyRun : claim.runId;
    if (claimedRunId !== bodyRun) {
      throw new ApiError(
        422,
        'IDEMPOTENCY_KEY_REUSED',
        `Idempotency-Key '${idempotencyKey}' was used within 24 h with another request body (run ${claimedRunId})`,
        {
          run_id: claimedRunId,
        },
      );
    }
    if (!claim.claimed) {
      // The key is claimed before the run is written (so concurrent retries agree on one run id): a
      // process that died in between left a key naming no run. The retry writes that run; of retries racing
      // here, the conditional create lets one through. Either way the key's first request started it.
      if ((await deps.store.getRun(claim.runId)) === undefined) await createAndLaunch(deps, { ...spec, runId: claim.runId });
      return result(claim.runId, true);
    }
  }
  await createAndLaunch(deps, { ...spec, runId: claimedRunId ?? runId });
  return result(claimedRunId ?? runId, false);
};

/** A key of its own for one Idempotency-Key with one request body (fixed length, whatever the key's). */
export const bodyKey = (key: string, body: StartRunBody): string =>
  `body:${createHash('sha256').update(key).update('\0').update(JSON.stringify(body)).digest('hex').slice(0, 40)}`;

/** Writes the run (only if no run has its id) and starts its execution; a run another request wrote first is left to that request. */
const createAndLaunch = async (deps: ApiDeps, spec: Omit<NewRun, 'owner' | 'mode'> & { mode: 'express' | 'standard' }): Promise<void> => {
  const owner = deps.launcher.newOwner(spec.runId, spec.now);
  let run: RunItem;
  try {
    run = await createRun(deps.store, { ...spec, owner });
  } catch (error) {
    if (error instanceof StaleRunError) return;
    throw error;
  }
  // The validation prepareRun made (validate.ts remembers it by object): a worker thread records it for its copy.
  const issues = validateWorkflow(spec.workflow, deps.catalog);
  await deps.launcher.launch({ runId: spec.runId, owner, mode: spec.mode, created: { run, workflow: spec.workflow, issues } });
};

/** Resumes a failed, interrupted or cancelled run, optionally with a person's patch checked as `flowmend resume --workflow` does. */
export const resumeRun = async (deps: ApiDeps, runId: string, body: ResumeBody, traceparent?: string): Promise<RunItem> => {
  const now = deps.now();
  // A waiting run goes on through its wait, not a takeover (DESIGN 7b).
  const waiting = body.workflow === undefined ? await deps.store.getRun(runId) : undefined;
  if (waiting?.status === 'waiting') {
    await continueWaitingRun(deps, waiting);
    return waiting;
  }
  let patch: IrVersionItem | undefined;
  let listed: readonly NodeRecord[] | undefined;
  // The run as read last (the waiting check's read, or the patch check's), which the claim takes over instead of reading it again.
  let read = waiting;
  if (body.workflow !== undefined) {
    const checked = await checkRunPatch(deps.store, runId, await workflowFromField(body.workflow), {
      catalog: deps.catalog,
      now,
      reason: 'Workflow patched through the API',
    });
    if (!checked.ok) {
      if (checked.missing) throw notFound(`run '${runId}'`);
      throw new ApiError(422, 'INVALID_PATCH', checked.message, { problems: checked.problems });
    }
    patch = checked.item;
    read = checked.run;
    listed = checked.listed;
  }
  const owner = deps.launcher.newOwner(runId, now);
  const run = await claimRun(deps.store, runId, {
    owner,
    now,
    isAlive: (o) => deps.launcher.isAlive(o),
    ...(read ? { read } : {}),
    trace: { caller: parseTraceparent(traceparent), traced: deps.traced ?? false },
    ...(patch ? { patch } : {}),
    ...(body.max_repairs !== undefined ? { maxRepairs: body.max_repairs } : {}),
    // max_repairs alone says whether to repair (above 0: a run started with repair off asked for repairs), as the CLI's --max-repairs does.
    ...(body.repair !== undefined ? { repairEnabled: body.repair } : body.max_repairs !== undefined ? { repairEnabled: body.max_repairs > 0 } : {}),
    ...(body.repair_approval !== undefined ? { repairApproval: body.repair_approval } : {}),
    ...(body.no_cache !== undefined ? { noCache: body.no_cache } : {}),
  });
  // The claimed item and the patch as checked go with the launch (the engine's cache, as a created run's).
  const answer = { ...run };
  await deps.launcher.launch({ runId, owner, mode: run.mode, resumed: { run, ...(patch ? { patched: patch.ir } : {}), ...(listed ? { listed } : {}) } });
  return answer;
};

/** A cancel's slots go to the runs waiting for them, whose executions this API starts at once (as after an answer). */
const cancelFlowOf = (deps: ApiDeps): CancelFlow | undefined =>
  deps.flow && {
    store: deps.flow,
    grantMs: DEFAULT_GRANT_MS,
    wakeups: {
      schedule: (request) =>
        deps.launcher.launch({ runId: request.runId, owner: deps.launcher.newOwner(request.runId, request.at), mode: request.mode, waitId: request.waitId }),
    },
  };

/**
 * Cancels a running run (conditional write first, so no step can move it on), then stops its execution.
 * A run this process drives (`serve`) has recorded what became of its node by the time `stop` returns.
 */
export const cancelRunAndStop = async (deps: ApiDeps, runId: string): Promise<CancelResult & { outcome?: CancelOutcome }> => {
  const result = await cancelRun(deps.store, runId, deps.now(), cancelFlowOf(deps));
  if (result.previousOwner) await deps.launcher.stop(result.previousOwner);
  const outcome = await cancelOutcomeOf(result, (id, seq) => awaitCancelledStep(deps.store, id, seq, { timeoutMs: 0, sleep: async () => undefined }));
  return { ...result, ...(outcome ? { outcome } : {}) };
};
