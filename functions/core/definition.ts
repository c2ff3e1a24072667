import { ENGINE_RETRY, type RetryPolicy, TRANSIENT_RETRY } from './retry-policy.ts';

/**
 * The one state machine definition (DESIGN section 6), JSONPath only because the local interpreter
 * ignores JSONata. Both hosts run what this returns: locally in aws-local-stepfunctions with each Task
 * bound by state name, on AWS through CDK with the Resource strings substituted by Lambda ARNs.
 *
 *   Advance -> Route -> Run<Type> -> Advance          (3 transitions per executed node)
 *                    -> Repair -> Advance
 *                    -> Continue (new execution of the same run) -> Continued
 *                    -> Done | Failed
 */

export interface DefinitionResources {
  advance: string;
  repair: string;
  /** Lambda of each node type, by type name. */
  runners: Readonly<Record<string, string>>;
  /** Starts the next execution of the same run; the Step Functions integration ARN on AWS. */
  continueRun: string;
}

/** Lambda platform hiccups worth retrying on any Task (never seen locally). */
const LAMBDA_SERVICE_ERRORS = [
  'Lambda.ServiceException',
  'Lambda.AWSLambdaException',
  'Lambda.SdkClientException',
  'Lambda.TooManyRequestsException',
];

export const STATE = {
  advance: 'Advance',
  route: 'Route',
  repair: 'Repair',
  continueRun: 'Continue',
  continued: 'Continued',
  done: 'Done',
  failed: 'Failed',
  unknown: 'UnknownStep',
} as const;

/** State name of the Task that runs nodes of a type: `Run` + PascalCase(type). */
export const runnerStateName = (nodeType: string): string =>
  `Run${nodeType.replace(/(^|[-_])([a-z0-9])/g, (_m, _sep: string, c: string) => c.toUpperCase())}`;

const serviceRetry = { ErrorEquals: LAMBDA_SERVICE_ERRORS, IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2 };

/** An ASL Retry from one of our policies, whose error lists come from the error classes (retry-policy.ts). */
const retryOf = (policy: RetryPolicy) => ({
  ErrorEquals: [...policy.errors],
  IntervalSeconds: policy.intervalSeconds,
  MaxAttempts: policy.maxAttempts,
  BackoffRate: policy.backoffRate,
});

export type AslDefinition = { Comment: string; StartAt: string; States: Record<string, Record<string, unknown>> };

export const buildDefinition = (resources: DefinitionResources): AslDefinition => {
  const types = Object.keys(resources.runners).sort();
  const catchToAdvance = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: STATE.advance }];

  const runnerStates = Object.fromEntries(
    types.map((type) => [
      runnerStateName(type),
      {
        Type: 'Task',
        Resource: resources.runners[type],
        ResultPath: '$.result',
        Retry: [retryOf(TRANSIENT_RETRY), serviceRetry],
        Catch: catchToAdvance,
        Next: STATE.advance,
      },
    ]),
  );

  const kindIs = (kind: string) => ({ Variable: '$.kind', StringEquals: kind });

  return {
    Comment: 'flowmend run interpreter: every decision is made by the Advance step (functions/core/engine.ts)',
    StartAt: STATE.advance,
    States: {
      [STATE.advance]: {
        Type: 'Task',
        Resource: resources.advance,
        Retry: [retryOf(ENGINE_RETRY), serviceRetry],
        Next: STATE.route,
      },
      [STATE.route]: {
        Type: 'Choice',
        Choices: [
          ...types.map((type) => ({
            And: [kindIs('run'), { Variable: '$.node.type', StringEquals: type }],
            Next: runnerStateName(type),
          })),
          { ...kindIs('repair'), Next: STATE.repair },
          { ...kindIs('continue'), Next: STATE.continueRun },
          { ...kindIs('done'), Next: STATE.done },
          { ...kindIs('failed'), Next: STATE.failed },
        ],
        Default: STATE.unknown,
      },
      ...runnerStates,
      [STATE.repair]: {
        Type: 'Task',
        Resource: resources.repair,
        ResultPath: '$.repair',
        Retry: [serviceRetry],
        Catch: catchToAdvance,
        Next: STATE.advance,
      },
      [STATE.continueRun]: {
        Type: 'Task',
        Resource: resources.continueRun,
        Parameters: {
          'StateMachineArn.$': '$$.StateMachine.Id',
          Input: { 'runId.$': '$.runId', 'owner.$': '$.owner', kind: 'start' },
        },
        Retry: [serviceRetry],
        Next: STATE.continued,
      },
      [STATE.continued]: { Type: 'Succeed' },
      [STATE.done]: { Type: 'Succeed' },
      [STATE.failed]: { Type: 'Fail', ErrorPath: '$.error.code', CausePath: '$.error.message' },
      [STATE.unknown]: {
        Type: 'Fail',
        Error: 'UnknownStep',
        Cause: 'Advance returned a step this state machine has no branch for (a node type without a runner?)',
      },
    },
  };
};
