import { z } from 'zod';
import { ConfigurationError, InvalidInputError } from '../../core/errors.ts';
import { cryptoIds, type Ids } from '../../core/ids.ts';
import type { NodeCatalog } from '../../core/node-type.ts';
import { prepareRun } from '../../core/prepare-run.ts';
import { createRun, DEFAULT_MAX_REPAIRS, newRunId } from '../../core/run-lifecycle.ts';
import { RunIdSchema } from '../../core/run-model.ts';
import type { RunStore } from '../../core/run-store.ts';

export const StartRunRequestSchema = z.strictObject({
  workflow: z.unknown(),
  /** Defaults to the workflow's `name`, then 'workflow'. */
  workflowName: z.string().min(1).max(200).optional(),
  params: z.record(z.string(), z.unknown()).default({}),
  repairEnabled: z.boolean().default(true),
  maxRepairs: z.number().int().nonnegative().default(DEFAULT_MAX_REPAIRS),
  /** Overrides the choice made from the nodes' timeouts. */
  mode: z.enum(['express', 'standard']).optional(),
  runId: RunIdSchema.optional(),
});
export type StartRunRequest = z.input<typeof StartRunRequestSchema>;

export interface StartRunResult {
  runId: string;
  mode: 'express' | 'standard';
  executionArn: string;
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
}

/** Validates a workflow, writes the run, and starts its first execution on the machine its nodes need. */
export const makeStartRunHandler = (deps: StartRunDeps) => async (event: unknown): Promise<StartRunResult> => {
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
  const owner = { id: `sfn-${runId}-${ids.hex(4)}`, since: now };
  await createRun(deps.store, { runId, workflow, workflowName, params, owner, repairEnabled, maxRepairs, mode, now });
  const executionArn = await deps.startExecution(
    deps.stateMachines[mode],
    runId,
    JSON.stringify({ kind: 'start', runId, owner: owner.id }),
  );
  return { runId, mode, executionArn };
};

let awsHandler: ((event: unknown) => Promise<StartRunResult>) | undefined;

/** Lambda entry (`aws lambda invoke --function-name <StartRunFunctionName> --payload '{"workflow": ...}'`). */
export const handler = async (event: unknown): Promise<StartRunResult> => {
  if (!awsHandler) {
    const [{ awsDeps }, { SFNClient, StartExecutionCommand }, { builtinCatalog }] = await Promise.all([
      import('./aws-deps.ts'),
      import('@aws-sdk/client-sfn'),
      import('../../nodes/catalog.ts'),
    ]);
    const { store, env } = awsDeps();
    if (!env.EXPRESS_STATE_MACHINE_ARN || !env.STANDARD_STATE_MACHINE_ARN) {
      throw new ConfigurationError('EXPRESS_STATE_MACHINE_ARN and STANDARD_STATE_MACHINE_ARN must be set');
    }
    const sfn = new SFNClient({});
    awsHandler = makeStartRunHandler({
      store,
      catalog: builtinCatalog,
      now: Date.now,
      stateMachines: { express: env.EXPRESS_STATE_MACHINE_ARN, standard: env.STANDARD_STATE_MACHINE_ARN },
      startExecution: async (stateMachineArn, name, input) => {
        const { executionArn } = await sfn.send(new StartExecutionCommand({ stateMachineArn, name, input }));
        return executionArn ?? '';
      },
    });
  }
  return awsHandler(event);
};
