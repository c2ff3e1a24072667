import { REPAIR_MAX_S } from './execution-limits.ts';
import { CONTINUED_EXECUTION_NAME } from './execution-names.ts';
import { ENGINE_RETRY, LAMBDA_SERVICE_RETRY, type RetryPolicy, THROTTLE_RETRY, TRANSIENT_RETRY } from './retry-policy.ts';

/**
 * The one state machine definition (DESIGN section 6), JSONPath only because the local interpreter
 * ignores JSONata. Both hosts run what this returns: locally in aws-local-stepfunctions with each Task
 * bound by state name, on AWS through CDK with the Resource strings substituted by Lambda ARNs.
 *
 *   Advance -> Route -> Run<Type> -> Advance          (3 transitions per executed node)
 *                    -> Repair -> Advance
 *                    -> Continue (new execution of the same run) -> Continued
 *                                             (start failed) -> Interrupted -> InterruptedFail
 *                    -> Done | Failed
 *                    -> Waiting (the run waits: a wake-up or an answer starts the next execution) | Idle
 *                    -> RetryWait | RateWait -> CheckRun (may the try still start?) -> RouteRetry -> Run<Type>
 *
 * Every Task has a TimeoutSeconds, so no execution can wait for ever on a lost call.
 */

export interface DefinitionResources {
  advance: string;
  repair: string;
  /** Lambda of each node type, by type name. */
  runners: Readonly<Record<string, string>>;
  /** Starts the next execution of the same run; the Step Functions integration ARN on AWS. */
  continueRun: string;
  /** Marks a run interrupted (resumable) when its next execution cannot be started. */
  interrupted: string;
  /** Longest each Task may wait for its Lambda, in seconds; the defaults match the stack's Lambda timeouts. */
  timeoutsS?: Partial<TaskTimeouts>;
}

export interface TaskTimeouts {
  advance: number;
  repair: number;
  interrupted: number;
  /** By node type; a type not named gets `runnerDefault`. */
  runners: Readonly<Record<string, number>>;
  runnerDefault: number;
}

/**
 * Lambda timeouts plus a margin, so that the Lambda's own timeout error (caught and classified)
 * comes first and the Task timeout only fires when the call itself is lost.
 */
export const TASK_TIMEOUT_MARGIN_S = 30;
export const DEFAULT_TASK_TIMEOUTS_S: TaskTimeouts = {
  advance: 60 + TASK_TIMEOUT_MARGIN_S,
  repair: REPAIR_MAX_S + TASK_TIMEOUT_MARGIN_S,
  interrupted: 30 + TASK_TIMEOUT_MARGIN_S,
  runners: { transform: 60 + TASK_TIMEOUT_MARGIN_S },
  runnerDefault: 900 + TASK_TIMEOUT_MARGIN_S,
};

/**
 * What `arn:aws:states:::states:startExecution` raises (the integration's own errors and the SDK's),
 * retried before the run is recorded as interrupted. Step Functions names them `StepFunctions.<Exception>`;
 * `States.TaskFailed` covers any other failure shape of the integration.
 */
export const CONTINUE_RETRY_ERRORS = [
  'StepFunctions.SdkClientException',
  'StepFunctions.AWSStepFunctionsException',
  'StepFunctions.ThrottlingException',
  'StepFunctions.ExecutionLimitExceededException',
  'States.TaskFailed',
  'States.Timeout',
];

/** A retried start whose first try did start the execution: the name is taken, the run goes on there. */
export const CONTINUE_ALREADY_STARTED = 'StepFunctions.ExecutionAlreadyExistsException';

export const STATE = {
  advance: 'Advance',
  route: 'Route',
  repair: 'Repair',
  continueRun: 'Continue',
  continued: 'Continued',
  done: 'Done',
  failed: 'Failed',
  interrupted: 'Interrupted',
  interruptedFail: 'InterruptedFail',
  unknown: 'UnknownStep',
  retryWait: 'RetryWait',
  retryRoute: 'RouteRetry',
  rateWait: 'RateWait',
  checkRun: 'CheckRun',
  checkRefused: 'CheckRefused',
  waiting: 'Waiting',
  idle: 'Idle',
} as const;

/** State name of the Map that runs a chunk of a batch of a node type's items. */
export const batchStateName = (nodeType: string): string => `Batch${runnerStateName(nodeType).slice(3)}`;
/** State name of the Task that runs one batch item of a type, inside its Map (names are unique machine-wide). */
export const itemRunnerStateName = (nodeType: string): string => `Item${runnerStateName(nodeType)}`;
/** State name of the Task (the engine Lambda) that records one batch item of a type, inside its Map. */
export const recordItemStateName = (nodeType: string): string => `Record${runnerStateName(nodeType).slice(3)}Item`;

/** State names of the Choice and Wait that hold a retried batch item for its `retry_wait`, inside its Map. */
export const itemWaitChoiceName = (nodeType: string): string => `Retry${runnerStateName(nodeType).slice(3)}Item`;
export const itemWaitStateName = (nodeType: string): string => `Wait${runnerStateName(nodeType).slice(3)}Item`;

/** State name of the Task that runs nodes of a type: `Run` + PascalCase(type). */
export const runnerStateName = (nodeType: string): string => `Run${nodeType.replace(/(^|[-_])([a-z0-9])/g, (_m, _sep: string, c: string) => c.toUpperCase())}`;

/** An ASL Retry from one of our policies, whose error lists come from the error classes (retry-policy.ts). */
const retryOf = (policy: RetryPolicy) => ({
  ErrorEquals: [...policy.errors],
  IntervalSeconds: policy.intervalSeconds,
  MaxAttempts: policy.maxAttempts,
  BackoffRate: policy.backoffRate,
  ...(policy.maxDelaySeconds === undefined ? {} : { MaxDelaySeconds: policy.maxDelaySeconds }),
  ...(policy.jitter ? { JitterStrategy: 'FULL' } : {}),
});

/** Lambda platform hiccups and throttling, worth retrying on any Lambda Task (never seen locally). */
const lambdaRetries = [retryOf(THROTTLE_RETRY), retryOf(LAMBDA_SERVICE_RETRY)];

export type AslDefinition = { Comment: string; StartAt: string; States: Record<string, Record<string, unknown>> };

export const buildDefinition = (resources: DefinitionResources): AslDefinition => {
  const types = Object.keys(resources.runners).sort();
  const timeouts = { ...DEFAULT_TASK_TIMEOUTS_S, ...resources.timeoutsS };
  const runnerTimeout = (type: string): number => timeouts.runners[type] ?? timeouts.runnerDefault;
  const catchToAdvance = [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: STATE.advance }];

  const runnerStates = Object.fromEntries(
    types.map((type) => [
      runnerStateName(type),
      {
        Type: 'Task',
        Resource: resources.runners[type],
        TimeoutSeconds: runnerTimeout(type),
        ResultPath: '$.result',
        Retry: [retryOf(TRANSIENT_RETRY), ...lambdaRetries],
        Catch: catchToAdvance,
        Next: STATE.advance,
      },
    ]),
  );

  const kindIs = (kind: string) => ({ Variable: '$.kind', StringEquals: kind });
  const toRecordItem = (type: string) => [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: recordItemStateName(type) }];
  // A chunk of a batch's items (batch/batch-step.ts), one Map per node type (a Choice per item would cost
  // every item a JSONPath evaluation per type): each item runs on its type's runner, with the same Retry
  // and Catch as a single node, then its RecordItem (the engine Lambda) makes its result durable on its
  // own, so an item counts as done only once stored. The chunk is at most the batch's width wide.
  const batchStates = Object.fromEntries(
    types.map((type) => [
      batchStateName(type),
      {
        Type: 'Map',
        ItemsPath: '$.items',
        MaxConcurrencyPath: '$.width',
        Iterator: {
          StartAt: itemWaitChoiceName(type),
          States: {
            // A retried item (pflow's retry_wait) waits here, inside the same definition on both hosts.
            [itemWaitChoiceName(type)]: {
              Type: 'Choice',
              Choices: [{ Variable: '$.waitS', IsPresent: true, Next: itemWaitStateName(type) }],
              Default: itemRunnerStateName(type),
            },
            [itemWaitStateName(type)]: { Type: 'Wait', SecondsPath: '$.waitS', Next: itemRunnerStateName(type) },
            [itemRunnerStateName(type)]: { ...runnerStates[runnerStateName(type)], Catch: toRecordItem(type), Next: recordItemStateName(type) },
            [recordItemStateName(type)]: {
              Type: 'Task',
              Resource: resources.advance,
              TimeoutSeconds: timeouts.advance,
              Retry: [retryOf(ENGINE_RETRY), ...lambdaRetries],
              End: true,
            },
          },
        },
        ResultPath: '$.recorded',
        Catch: catchToAdvance,
        Next: STATE.advance,
      },
    ]),
  );

  return {
    Comment: 'flowmend run interpreter: every decision is made by the Advance step (functions/core/engine.ts)',
    StartAt: STATE.advance,
    States: {
      [STATE.advance]: {
        Type: 'Task',
        Resource: resources.advance,
        TimeoutSeconds: timeouts.advance,
        Retry: [retryOf(ENGINE_RETRY), ...lambdaRetries],
        Next: STATE.route,
      },
      [STATE.route]: {
        Type: 'Choice',
        Choices: [
          // A node's `retry` (pflow's): its next try waits here first, in a Wait state (no Lambda waits).
          { And: [kindIs('run'), { Variable: '$.waitS', IsPresent: true }], Next: STATE.retryWait },
          // A rate limit's start (flow/flow-step.ts): the runner waits to that instant in a Wait state.
          { And: [kindIs('run'), { Variable: '$.waitUntil', IsPresent: true }], Next: STATE.rateWait },
          ...types.map((type) => ({
            And: [kindIs('run'), { Variable: '$.node.type', StringEquals: type }],
            Next: runnerStateName(type),
          })),
          ...types.map((type) => ({
            And: [kindIs('batch'), { Variable: '$.nodeType', StringEquals: type }],
            Next: batchStateName(type),
          })),
          { ...kindIs('repair'), Next: STATE.repair },
          { ...kindIs('continue'), Next: STATE.continueRun },
          { ...kindIs('done'), Next: STATE.done },
          { ...kindIs('failed'), Next: STATE.failed },
          { ...kindIs('waiting'), Next: STATE.waiting },
          { ...kindIs('idle'), Next: STATE.idle },
        ],
        Default: STATE.unknown,
      },
      ...runnerStates,
      ...batchStates,
      [STATE.retryWait]: { Type: 'Wait', SecondsPath: '$.waitS', Next: STATE.checkRun },
      [STATE.rateWait]: { Type: 'Wait', TimestampPath: '$.waitUntil', Next: STATE.checkRun },
      // After a wait, the engine checks that the run still wants the try (check-run.ts): a cancel during the
      // wait stops it there, before its runner (an Express execution cannot be stopped from outside).
      [STATE.checkRun]: {
        Type: 'Task',
        Resource: resources.advance,
        TimeoutSeconds: timeouts.advance,
        Parameters: { kind: 'check', 'runId.$': '$.runId', 'owner.$': '$.owner', 'seq.$': '$.seq' },
        ResultPath: '$.check',
        Retry: [retryOf(ENGINE_RETRY), ...lambdaRetries],
        Next: STATE.retryRoute,
      },
      [STATE.retryRoute]: {
        Type: 'Choice',
        Choices: types.map((type) => ({
          And: [
            { Variable: '$.check.kind', StringEquals: 'go' },
            { Variable: '$.node.type', StringEquals: type },
          ],
          Next: runnerStateName(type),
        })),
        Default: STATE.checkRefused,
      },
      // The check's outcome (the cancel's failure) is what Route then ends the execution with.
      [STATE.checkRefused]: { Type: 'Pass', InputPath: '$.check', Next: STATE.route },
      [STATE.repair]: {
        Type: 'Task',
        Resource: resources.repair,
        TimeoutSeconds: timeouts.repair,
        ResultPath: '$.repair',
        Retry: lambdaRetries,
        Catch: catchToAdvance,
        Next: STATE.advance,
      },
      [STATE.continueRun]: {
        Type: 'Task',
        Resource: resources.continueRun,
        TimeoutSeconds: 30,
        Parameters: {
          'StateMachineArn.$': '$$.StateMachine.Id',
          // `c-<runId>-<rev>` (execution-names.ts): the run shows in the console, the watcher can tell which
          // run an execution served, and a retried start reuses the name.
          'Name.$': CONTINUED_EXECUTION_NAME,
          Input: { 'runId.$': '$.runId', 'owner.$': '$.owner', kind: 'start' },
        },
        // Backoff 1+2+4+8 s: fits in the 20 s an Express execution keeps after its last Advance.
        Retry: [
          { ErrorEquals: [CONTINUE_ALREADY_STARTED], MaxAttempts: 0 },
          { ErrorEquals: CONTINUE_RETRY_ERRORS, IntervalSeconds: 1, MaxAttempts: 4, BackoffRate: 2 },
        ],
        Catch: [
          { ErrorEquals: [CONTINUE_ALREADY_STARTED], ResultPath: null, Next: STATE.continued },
          { ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: STATE.interrupted },
        ],
        Next: STATE.continued,
      },
      [STATE.interrupted]: {
        Type: 'Task',
        Resource: resources.interrupted,
        TimeoutSeconds: timeouts.interrupted,
        Parameters: { 'runId.$': '$.runId', 'owner.$': '$.owner', 'error.$': '$.error', source: 'continue' },
        ResultPath: null,
        Retry: lambdaRetries,
        // Even if the run cannot be marked here, the failed execution is seen by the watcher (the stack's rule).
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: null, Next: STATE.interruptedFail }],
        Next: STATE.interruptedFail,
      },
      [STATE.interruptedFail]: {
        Type: 'Fail',
        Error: 'RunInterrupted',
        Cause: 'the next execution of the run could not be started; the run is marked interrupted and can be resumed',
      },
      [STATE.continued]: { Type: 'Succeed' },
      [STATE.done]: { Type: 'Succeed' },
      // The execution ends while the run waits, so nothing is billed by the wait's length (DESIGN 7b).
      [STATE.waiting]: { Type: 'Succeed' },
      [STATE.idle]: { Type: 'Succeed' },
      [STATE.failed]: { Type: 'Fail', ErrorPath: '$.error.code', CausePath: '$.error.message' },
      [STATE.unknown]: {
        Type: 'Fail',
        Error: 'UnknownStep',
        Cause: 'Advance returned a step this state machine has no branch for (a node type without a runner?)',
      },
    },
  };
};
