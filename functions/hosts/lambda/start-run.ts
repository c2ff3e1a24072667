import type { NodeCatalog, RunStore } from '../../core/index.ts';
import {
  ConfigurationError,
  cryptoIds,
  DEFAULT_MAX_REPAIRS,
  type Ids,
  InvalidInputError,
  newRunId,
  ownerExecutionName,
  parseTraceparent,
  prepareRun,
  RunIdSchema,
  startRunTrace,
} from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { startRunOnce } from './start-once.ts';
import { settleTelemetry } from './telemetry-settle.ts';

export const StartRunRequestSchema = z.strictObject({
  workflow: z.unknown(),
  /** Defaults to the workflow's `name`, then 'workflow'. */
  workflowName: z.optional(z.string().check(z.minLength(1), z.maxLength(200))),
  params: z._default(z.record(z.string(), z.unknown()), {}),
  repairEnabled: z._default(z.boolean(), true),
  maxRepairs: z._default(z.int().check(z.nonnegative()), DEFAULT_MAX_REPAIRS),
  /** Overrides the choice made from the nodes' timeouts. */
  mode: z.optional(z.enum(['express', 'standard'])),
  runId: z.optional(RunIdSchema),
  /** The caller's W3C traceparent: the run joins that trace. */
  traceparent: z.optional(z.string().check(z.maxLength(256))),
});
export type StartRunRequest = z.input<typeof StartRunRequestSchema>;

export interface StartRunResult {
  runId: string;
  mode: 'express' | 'standard';
  /** Absent when a retried start found its run already going. */
  executionArn?: string;
}

export interface StartRunDeps {
  store: RunStore;
  catalog: NodeCatalog;
  now: () => number;
  /** Randomness for run and owner ids; `cryptoIds` when not given. */
  ids?: Ids;
  stateMachines: { express: string; standard: string };
  /** Starts an execution named `name`; returns its ARN. */
  startExecution(stateMachineArn: string, name: string, input: string): Promise<string>;
  /** Runs without a caller's trace get one of their own (this host exports traces). */
  traced?: boolean;
}

/** Validates a workflow, writes the run, and starts its first execution on the machine its nodes need. */
export const makeStartRunHandler =
  (deps: StartRunDeps) =>
  async (event: unknown): Promise<StartRunResult> => {
    const request = StartRunRequestSchema.safeParse(event);
    if (!request.success) {
      throw new InvalidInputError(`Bad start request: ${request.error.issues.map((i) => `${i.path.join('.') || 'request'}: ${i.message}`).join('; ')}`);
    }
    const prepared = prepareRun(request.data, deps.catalog);
    if (!prepared.ok) {
      const { message, issues, problems } = prepared;
      throw new InvalidInputError(message, { details: { ...(issues ? { issues } : {}), ...(problems ? { problems } : {}) } });
    }
    const { workflow, workflowName, params, repairEnabled, maxRepairs, mode } = prepared.spec;
    const now = deps.now();
    const ids = deps.ids ?? cryptoIds;
    const runId = request.data.runId ?? newRunId(now, ids);
    // Executions are named after their owner, so a resume (a new owner) can start the same run again.
    let executionArn: string | undefined;
    const launcher = {
      newOwner: (id: string, since: number) => ({ id: ownerExecutionName(id, ids.hex(4)), since }),
      launch: async (launch: { runId: string; owner: { id: string }; mode: 'express' | 'standard' }) => {
        const input = JSON.stringify({ kind: 'start', runId: launch.runId, owner: launch.owner.id });
        executionArn = await deps.startExecution(deps.stateMachines[launch.mode], launch.owner.id, input);
      },
    };
    const { run } = await startRunOnce(
      { store: deps.store, launcher, now: () => now },
      {
        runId,
        workflow,
        workflowName,
        params,
        repairEnabled,
        maxRepairs,
        mode,
        trace: startRunTrace({ caller: parseTraceparent(request.data.traceparent), traced: deps.traced ?? false, now, ids }),
      },
    );
    return { runId, mode: run.mode, ...(executionArn === undefined ? {} : { executionArn }) };
  };

let awsHandler: ((event: unknown) => Promise<StartRunResult>) | undefined;

/** Lambda entry (`aws lambda invoke --function-name <StartRunFunctionName> --payload '{"workflow": ...}'`). */
export const handler = async (event: unknown): Promise<StartRunResult> => {
  if (!awsHandler) {
    const [{ awsDeps }, { SFNClient, StartExecutionCommand }, { builtinSpecCatalog }] = await Promise.all([
      import('./aws-deps.ts'),
      import('@aws-sdk/client-sfn'),
      import('../../nodes/specs.ts'),
    ]);
    const { store, env, traced } = awsDeps();
    if (!env.EXPRESS_STATE_MACHINE_ARN || !env.STANDARD_STATE_MACHINE_ARN) {
      throw new ConfigurationError('EXPRESS_STATE_MACHINE_ARN and STANDARD_STATE_MACHINE_ARN must be set');
    }
    const sfn = new SFNClient({});
    awsHandler = makeStartRunHandler({
      store,
      catalog: builtinSpecCatalog,
      now: Date.now,
      traced,
      stateMachines: { express: env.EXPRESS_STATE_MACHINE_ARN, standard: env.STANDARD_STATE_MACHINE_ARN },
      startExecution: async (stateMachineArn, name, input) => {
        const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input }));
        return executionArn ?? '';
      },
    });
  }
  try {
    return await awsHandler(event);
  } finally {
    await settleTelemetry();
  }
};
