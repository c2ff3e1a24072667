import { z } from 'zod';
import { ConfigurationError, InvalidInputError } from '../../core/errors.ts';
import type { Workflow } from '../../core/ir.ts';
import type { NodeCatalog } from '../../core/node-type.ts';
import { prepareInputs } from '../../core/inputs.ts';
import { DEFAULT_MAX_REPAIRS, newRunId } from '../../core/run-lifecycle.ts';
import { RunIdSchema } from '../../core/run-model.ts';
import type { RunStore } from '../../core/run-store.ts';
import { formatIssues, hasErrors, parseWorkflow, validateWorkflow } from '../../core/validate.ts';
import { sfnOwnerId } from '../../adapters/sfn-run-launcher.ts';
import { startRunOnce } from './start-once.ts';

export const StartRunRequestSchema = z.strictObject({
  workflow: z.unknown(),
  workflowName: z.string().min(1).max(200).default('workflow'),
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
  /** Absent when a retried start found its run already going. */
  executionArn?: string;
}

/**
 * Longest node timeout an Express run allows. The engine starts a new execution before a node that would
 * not end within the current one, so a node must fit in a fresh 5-minute execution, with room for a retry.
 */
export const EXPRESS_MAX_NODE_TIMEOUT_S = 120;

/** Express unless a node may run longer than an Express execution can wait for it. */
export const chooseMode = (workflow: Workflow, catalog: NodeCatalog): 'express' | 'standard' =>
  workflow.nodes.every((node) => (catalog.get(node.type)?.timeoutS(node.params) ?? Number.POSITIVE_INFINITY) <= EXPRESS_MAX_NODE_TIMEOUT_S)
    ? 'express'
    : 'standard';

export interface StartRunDeps {
  store: RunStore;
  catalog: NodeCatalog;
  now: () => number;
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
  const parsed = parseWorkflow(request.data.workflow);
  if (!parsed.ok) throw new InvalidInputError(`The workflow does not parse:\n${formatIssues(parsed.issues)}`, { details: { issues: parsed.issues } });
  const { workflowName, repairEnabled, maxRepairs } = request.data;
  // As in the CLI: with repair on, a workflow that fails validation is repaired before any node runs.
  const issues = validateWorkflow(parsed.workflow, deps.catalog);
  if (hasErrors(issues) && !repairEnabled) {
    throw new InvalidInputError(`The workflow does not validate:\n${formatIssues(issues)}`, { details: { issues } });
  }
  const inputs = prepareInputs(parsed.workflow, request.data.params);
  if (!inputs.ok) throw new InvalidInputError(inputs.problems.map((p) => p.message).join('\n'), { details: { problems: inputs.problems } });
  const params = inputs.params;
  const runId = request.data.runId ?? newRunId(deps.now());
  const mode = request.data.mode ?? chooseMode(parsed.workflow, deps.catalog);
  // Executions are named after their owner, so a resume (a new owner) can start the same run again.
  let executionArn: string | undefined;
  const launcher = {
    newOwner: (id: string, since: number) => ({ id: sfnOwnerId(id), since }),
    launch: async (launch: { runId: string; owner: { id: string }; mode: 'express' | 'standard' }) => {
      const input = JSON.stringify({ kind: 'start', runId: launch.runId, owner: launch.owner.id });
      executionArn = await deps.startExecution(deps.stateMachines[launch.mode], launch.owner.id, input);
    },
  };
  const { run } = await startRunOnce({ store: deps.store, launcher, now: deps.now }, { runId, workflow: parsed.workflow, workflowName, params, repairEnabled, maxRepairs, mode });
  return { runId, mode: run.mode, ...(executionArn === undefined ? {} : { executionArn }) };
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
