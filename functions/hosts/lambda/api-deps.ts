import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SFNClient } from '@aws-sdk/client-sfn';
import * as z from 'zod';
import { createDocumentClient } from '../../adapters/dynamo-run-store.ts';
import { DynamoRegistryStore } from '../../adapters/dynamo-registry-store.ts';
import { SchedulerScheduleSync } from '../../adapters/eventbridge-schedules.ts';
import { SfnRunLauncher } from '../../adapters/sfn-run-launcher.ts';
import { ConfigurationError } from '../../core/index.ts';
import { builtinCatalog } from '../../nodes/catalog.ts';
import type { ApiDeps } from '../api/api-deps.ts';
import { awsDeps } from './aws-deps.ts';

/** What the stack puts in the environment of the API and scheduled-start Lambdas, beside the store's. */
export const ApiEnvSchema = z.object({
  EXPRESS_STATE_MACHINE_ARN: z.string().startsWith('arn:'),
  STANDARD_STATE_MACHINE_ARN: z.string().startsWith('arn:'),
  /** `rules`: schedules are EventBridge rules kept by the stack (LocalStack), not by the API. */
  FLOWMEND_SCHEDULE_MODE: z.enum(['scheduler', 'rules']).default('scheduler'),
  FLOWMEND_SCHEDULE_NAME: z.string().min(1).optional(),
  FLOWMEND_SCHEDULE_TARGET_ARN: z.string().startsWith('arn:').optional(),
  FLOWMEND_SCHEDULER_ROLE_ARN: z.string().startsWith('arn:').optional(),
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

/**
 * The API app's dependencies on AWS: the run table (large values in the bucket), the registry in the
 * same table, Step Functions executions, and EventBridge Scheduler for the schedules the API manages.
 * Clients honour `AWS_ENDPOINT_URL_<SERVICE>`, which is how LocalStack and the tests reach them.
 */
export function apiDepsFromEnv(env: NodeJS.ProcessEnv = process.env): ApiDeps {
  const { store, env: storeEnv } = awsDeps(env);
  const api = parseApiEnv(env);
  const registry = new DynamoRegistryStore({ client: createDocumentClient(new DynamoDBClient({})), tableName: storeEnv.TABLE_NAME });
  const launcher = new SfnRunLauncher({
    sfn: new SFNClient({}),
    store,
    stateMachines: { express: api.EXPRESS_STATE_MACHINE_ARN, standard: api.STANDARD_STATE_MACHINE_ARN },
    now: Date.now,
  });
  const scheduler =
    api.FLOWMEND_SCHEDULE_MODE === 'scheduler' && api.FLOWMEND_SCHEDULE_NAME && api.FLOWMEND_SCHEDULE_TARGET_ARN && api.FLOWMEND_SCHEDULER_ROLE_ARN
      ? new SchedulerScheduleSync({
          client: new SchedulerClient({}),
          groupName: api.FLOWMEND_SCHEDULE_NAME,
          targetArn: api.FLOWMEND_SCHEDULE_TARGET_ARN,
          roleArn: api.FLOWMEND_SCHEDULER_ROLE_ARN,
        })
      : undefined;
  return {
    store,
    registry,
    launcher,
    catalog: builtinCatalog,
    now: Date.now,
    ...(scheduler === undefined ? {} : { scheduleSync: scheduler }),
    // One JSON line per unexpected error, for CloudWatch Logs Insights; the client gets a bare 500.
    logError: (error) => console.error(JSON.stringify({ level: 'ERROR', message: 'unexpected API error', error: error instanceof Error ? { name: error.name, message: error.message, stack: error.stack } : String(error) })),
  };
}
