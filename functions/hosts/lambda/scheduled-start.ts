import { formatIssues, InvalidInputError, parseWorkflow, ScheduledStartEventSchema, sameStoredValue, scheduledIdempotencyKey } from '../../core/index.ts';
import type { ApiDeps } from '../api/api-deps.ts';
import { StartRunBodySchema } from '../api/api-schemas.ts';
import { type StartedRun, startRun } from '../api/run-operations.ts';
import { settleTelemetry } from './telemetry-settle.ts';

/**
 * The target of every schedule: starts one run of a workflow per fire time, through the API's own start
 * (same checks, same idempotency store), keyed by the schedule and its fire time, so a re-delivered event
 * or a retried invocation answers with the first run. A workflow kept as code (`ScheduledWorkflow`) is
 * registered under its name when it changed, so its runs record a version like any registered workflow's.
 */
export const makeScheduledStartHandler =
  (deps: ApiDeps) =>
  async (event: unknown): Promise<StartedRun> => {
    const parsed = ScheduledStartEventSchema.safeParse(event);
    if (!parsed.success) {
      throw new InvalidInputError(`Bad scheduled start: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'event'}: ${i.message}`).join('; ')}`);
    }
    const fire = parsed.data;
    let version = fire.version;
    if (fire.workflow !== undefined) {
      const workflow = parseWorkflow(fire.workflow);
      if (!workflow.ok) throw new InvalidInputError(`The scheduled workflow ${fire.workflowName} does not parse:\n${formatIssues(workflow.issues)}`);
      const latest = await deps.registry.getWorkflow(fire.workflowName);
      version =
        latest !== undefined && sameStoredValue(latest.workflow, workflow.workflow)
          ? latest.version
          : (await deps.registry.putWorkflow(fire.workflowName, workflow.workflow, deps.now())).version;
    }
    const body = StartRunBodySchema.parse({ workflow_name: fire.workflowName, params: fire.params, ...(version === undefined ? {} : { version }) });
    return startRun(deps, body, scheduledIdempotencyKey(fire), fire.traceparent);
  };

let awsHandler: ((event: unknown) => Promise<StartedRun>) | undefined;

/** Lambda entry, invoked by EventBridge Scheduler (or an EventBridge rule) with a `ScheduledStartEvent`. */
export const handler = async (event: unknown): Promise<StartedRun> => {
  if (!awsHandler) {
    const { apiDepsFromEnv } = await import('./api-deps.ts');
    awsHandler = makeScheduledStartHandler(apiDepsFromEnv());
  }
  try {
    const started = await awsHandler(event);
    console.log(JSON.stringify({ level: 'INFO', message: started.replayed ? 'scheduled run already started' : 'scheduled run started', ...started }));
    return started;
  } finally {
    await settleTelemetry();
  }
};
