import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoFlowStore } from '../../adapters/dynamo-flow-store.ts';
import { DynamoRegistryStore } from '../../adapters/dynamo-registry-store.ts';
import { RulesScheduleSync } from '../../adapters/eventbridge-rules.ts';
import { SchedulerScheduleSync } from '../../adapters/eventbridge-schedules.ts';
import { SfnRunLauncher } from '../../adapters/sfn-run-launcher.ts';
import { ConfigurationError } from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { builtinCatalog } from '../../nodes/catalog.ts';
import type { ApiDeps, ScheduleSync } from '../api/api-deps.ts';
import { awsDeps } from './aws-deps.ts';

/** What the stack puts in the environment of the API and scheduled-start Lambdas, beside the store's. */
export const ApiEnvSchema = z.object({
  EXPRESS_STATE_MACHINE_ARN: z.string().check(z.startsWith('arn:')),
  STANDARD_STATE_MACHINE_ARN: z.string().check(z.startsWith('arn:')),
  /** `rules`: schedules are EventBridge rules named `<FLOWMEND_SCHEDULE_NAME>-...` (LocalStack fires only these). */
  FLOWMEND_SCHEDULE_MODE: z._default(z.enum(['scheduler', 'rules']), 'scheduler'),
  FLOWMEND_SCHEDULE_NAME: z.optional(z.string().check(z.minLength(1))),
  FLOWMEND_SCHEDULE_TARGET_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  FLOWMEND_SCHEDULER_ROLE_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  /** Where a fire that could not be delivered goes (the stack's schedule dead-letter queue). */
  FLOWMEND_SCHEDULE_DLQ_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
});
export type ApiEnv = z.infer<typeof ApiEnvSchema>;

const parseApiEnv = (env: NodeJS.ProcessEnv): ApiEnv => {
  const parsed = ApiEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigurationError(`API Lambda environment is not the one the flowmend stack sets: ${issues}`);
  }
  return parsed.data;
};

/** The API's schedules as EventBridge Scheduler schedules, or as EventBridge rules in `rules` mode; none when the stack set no target. */
const scheduleSyncFromEnv = (api: ApiEnv): ScheduleSync | undefined => {
  if (api.FLOWMEND_SCHEDULE_NAME === undefined || api.FLOWMEND_SCHEDULE_TARGET_ARN === undefined) return undefined;
  switch (api.FLOWMEND_SCHEDULE_MODE) {
    case 'scheduler':
      return api.FLOWMEND_SCHEDULER_ROLE_ARN === undefined
        ? undefined
        : new SchedulerScheduleSync({
            client: new SchedulerClient({}),
            groupName: api.FLOWMEND_SCHEDULE_NAME,
            targetArn: api.FLOWMEND_SCHEDULE_TARGET_ARN,
            roleArn: api.FLOWMEND_SCHEDULER_ROLE_ARN,
            ...(api.FLOWMEND_SCHEDULE_DLQ_ARN === undefined ? {} : { deadLetterArn: api.FLOWMEND_SCHEDULE_DLQ_ARN }),
          });
    case 'rules':
      return new RulesScheduleSync({
        client: new EventBridgeClient({}),
        prefix: api.FLOWMEND_SCHEDULE_NAME,
        targetArn: api.FLOWMEND_SCHEDULE_TARGET_ARN,
        ...(api.FLOWMEND_SCHEDULE_DLQ_ARN === undefined ? {} : { deadLetterArn: api.FLOWMEND_SCHEDULE_DLQ_ARN }),
      });
  }
};

/**
 * The API app's dependencies on AWS: the run table (large values in the bucket), the registry in the
 * same table, Step Functions executions, and EventBridge Scheduler (or rules) for the schedules the API manages.
 * Clients honour `AWS_ENDPOINT_URL_<SERVICE>`, which is how LocalStack and the tests reach them.
 */
export function apiDepsFromEnv(env: NodeJS.ProcessEnv = process.env): ApiDeps {
  const { store, env: storeEnv, dynamo, traced } = awsDeps(env);
  const api = parseApiEnv(env);
  const registry = new DynamoRegistryStore({ client: dynamo, tableName: storeEnv.TABLE_NAME });
  const launcher = new SfnRunLauncher({
    sfn: new SFNClient({}),
    store,
    stateMachines: { express: api.EXPRESS_STATE_MACHINE_ARN, standard: api.STANDARD_STATE_MACHINE_ARN },
    now: Date.now,
  });
  const scheduler = scheduleSyncFromEnv(api);
  return {
    store,
    registry,
    launcher,
    flow: new DynamoFlowStore({ client: dynamo, tableName: storeEnv.TABLE_NAME }),
    catalog: builtinCatalog,
    now: Date.now,
    traced,
    ...(scheduler === undefined ? {} : { scheduleSync: scheduler }),
    // One JSON line per unexpected error, for CloudWatch Logs Insights; the client gets a bare 500.
    logError: (error) =>
      console.error(
        JSON.stringify({
          level: 'ERROR',
          message: 'unexpected API error',
          error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error),
        }),
      ),
  };
}
