import type { RunStore } from '../../core/index.ts';
import {
  type InterruptOutcome,
  InvalidInputError,
  markInterrupted,
  RunIdSchema,
  runIdOfExecution,
  runIdOfOwnerName,
  TaskErrorSchema,
} from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { settleTelemetry } from './telemetry-settle.ts';

/**
 * The watcher: marks a run `interrupted` when the execution advancing it died, from any of three sources:
 * - the Continue state's Catch (the next execution could not be started), with the run's owner;
 * - EventBridge's "Step Functions Execution Status Change" (Standard executions that failed, timed out or were aborted);
 * - the Express machine's log group, through a subscription filter on the execution's end events
 *   (Express executions send no EventBridge events; their ERROR-level log has them).
 * An execution's name names its run (core's execution-names.ts), so each source names the run.
 */

/** The Continue state's Catch: the Interrupted Task's Parameters. */
const FromContinueSchema = z.object({ source: z.literal('continue'), runId: RunIdSchema, owner: z.string(), error: TaskErrorSchema });

const EXECUTION_END_STATUSES = ['FAILED', 'TIMED_OUT', 'ABORTED'] as const;
const FromEventBridgeSchema = z.object({
  source: z.literal('aws.states'),
  'detail-type': z.literal('Step Functions Execution Status Change'),
  time: z.optional(z.string()),
  detail: z.object({
    name: z.string(),
    status: z.string(),
    stopDate: z.nullish(z.number()),
    error: z.nullish(z.string()),
    cause: z.nullish(z.string()),
  }),
});

const FromLogsSchema = z.object({ awslogs: z.object({ data: z.string() }) });
/**
 * The owner an execution advanced its run for, when its name says it: a first execution is named after
 * its owner (`sfn-<runId>-<hex>`), so its late end never marks a run that a resume has claimed since
 * (the execution of a failed run ends FAILED a moment after the store says failed). A continued
 * execution's name (`c-<runId>-<rev>`) names no owner: only the run's write time guards it.
 */
const ownerOf = (name: string): { ownerId?: string } => (runIdOfOwnerName(name) === undefined ? {} : { ownerId: name });

const LogsPayloadSchema = z.object({ logEvents: z.array(z.object({ timestamp: z.number(), message: z.string() })) });
/** One Step Functions log record (the fields the watcher reads). */
const ExecutionLogSchema = z.object({
  type: z.string(),
  execution_arn: z.string(),
  event_timestamp: z.optional(z.union([z.string(), z.number()])),
  details: z.nullish(z.partial(z.object({ error: z.nullish(z.string()), cause: z.nullish(z.string()) }))),
});
/** Log record types that end an execution without the run recording its end. */
export const EXECUTION_END_LOG_TYPES = ['ExecutionFailed', 'ExecutionTimedOut', 'ExecutionAborted'] as const;

export interface StoppedExecution {
  runId: string;
  ownerId?: string;
  stoppedAt: number;
  code: string;
  message: string;
}

/** The execution name inside an execution ARN (Standard `...:execution:<sm>:<name>`, Express `...:express:<sm>:<name>:<id>`). */
export const executionNameOfArn = (arn: string): string => arn.split(':')[7] ?? '';

/** What stopped, from whichever source called; throws InvalidInputError naming what was expected. */
export const stoppedExecutions = (event: unknown, now: number): StoppedExecution[] => {
  const fromContinue = FromContinueSchema.safeParse(event);
  if (fromContinue.success) {
    const { runId, owner, error } = fromContinue.data;
    return [
      {
        runId,
        ownerId: owner,
        stoppedAt: now,
        code: error.Error,
        message: `its next execution could not be started (${error.Error}${error.Cause ? `: ${error.Cause}` : ''})`,
      },
    ];
  }
  const fromRule = FromEventBridgeSchema.safeParse(event);
  if (fromRule.success) {
    const { detail, time } = fromRule.data;
    const runId = runIdOfExecution(detail.name);
    if (runId === undefined || !(EXECUTION_END_STATUSES as readonly string[]).includes(detail.status)) return [];
    return [
      {
        runId,
        ...ownerOf(detail.name),
        stoppedAt: detail.stopDate ?? (time ? Date.parse(time) : now),
        code: detail.error ?? `States.${detail.status}`,
        message: `execution ${detail.name} ${detail.status.toLowerCase().replace('_', ' ')}${detail.cause ? ` (${detail.cause})` : ''}`,
      },
    ];
  }
  const fromLogs = FromLogsSchema.safeParse(event);
  if (fromLogs.success) {
    // node:zlib only here: the local host runs this handler for the Continue Catch on every run and resume, which never unzips.
    const { gunzipSync } = process.getBuiltinModule('node:zlib');
    const payload = LogsPayloadSchema.parse(JSON.parse(gunzipSync(Buffer.from(fromLogs.data.awslogs.data, 'base64')).toString('utf8')));
    return payload.logEvents.flatMap((logEvent) => {
      const record = ExecutionLogSchema.safeParse(JSON.parse(logEvent.message));
      if (!record.success || !(EXECUTION_END_LOG_TYPES as readonly string[]).includes(record.data.type)) return [];
      const name = executionNameOfArn(record.data.execution_arn);
      const runId = runIdOfExecution(name);
      if (runId === undefined) return [];
      const code = record.data.details?.error ?? (record.data.type === 'ExecutionTimedOut' ? 'States.Timeout' : record.data.type);
      return [
        {
          runId,
          ...ownerOf(name),
          stoppedAt: logEvent.timestamp,
          code,
          message: `execution ${name}: ${record.data.type}${record.data.details?.cause ? ` (${record.data.details.cause})` : ''}`,
        },
      ];
    });
  }
  throw new InvalidInputError(
    'the interrupted-run watcher got an event it cannot read: expected the Continue state\'s {source: "continue", runId, owner, error}, ' +
      'an EventBridge "Step Functions Execution Status Change" event, or a CloudWatch Logs subscription {awslogs: {data}}',
  );
};

export interface MarkInterruptedDeps {
  store: RunStore;
  now: () => number;
}

/** The Interrupted Task and the watcher Lambda: marks each run whose execution died. */
export const makeMarkInterruptedHandler =
  (deps: MarkInterruptedDeps) =>
  async (event: unknown): Promise<{ runs: Record<string, InterruptOutcome> }> => {
    const runs: Record<string, InterruptOutcome> = {};
    for (const stopped of stoppedExecutions(event, deps.now())) {
      runs[stopped.runId] = await markInterrupted(deps.store, stopped.runId, {
        ...(stopped.ownerId === undefined ? {} : { ownerId: stopped.ownerId }),
        stoppedAt: stopped.stoppedAt,
        code: stopped.code,
        message: stopped.message,
        now: deps.now(),
      });
    }
    return { runs };
  };

let awsHandler: ((event: unknown) => Promise<{ runs: Record<string, InterruptOutcome> }>) | undefined;

/** Lambda entry. Env: the store's (aws-deps). */
export const handler = async (event: unknown): Promise<{ runs: Record<string, InterruptOutcome> }> => {
  if (!awsHandler) {
    const { awsDeps } = await import('./aws-deps.ts');
    awsHandler = makeMarkInterruptedHandler({ store: awsDeps().store, now: Date.now });
  }
  try {
    return await awsHandler(event);
  } finally {
    await settleTelemetry();
  }
};
