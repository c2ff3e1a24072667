import { BlobOffloadRunStore } from '../../adapters/blob-offload-run-store.ts';
import type { DynamoDocument } from '../../adapters/dynamo-document.ts';
import { DynamoFlowStore } from '../../adapters/dynamo-flow-store.ts';
import { DynamoJsonClient, dynamoEndpointFromEnv } from '../../adapters/dynamo-json-client.ts';
import { DynamoMemoStore } from '../../adapters/dynamo-memo-store.ts';
import { createDocumentClient, DynamoRunStore } from '../../adapters/dynamo-run-store.ts';
import { credentialsFromEnv } from '../../adapters/env-credentials.ts';
import { ObservingRunStore } from '../../adapters/observing-run-store.ts';
import { S3BlobStore, s3EndpointFromEnv } from '../../adapters/s3-blob-store.ts';
import type { BlobStore, EngineDeps, RunStore } from '../../core/index.ts';
import {
  ConfigurationError,
  cryptoIds,
  DEFAULT_EXECUTION_LIMITS,
  DEFAULT_GRANT_MS,
  DEFAULT_LEASE_MARGIN_MS,
  DEFAULT_MEMO_TTL_S,
  EngineCache,
  type ExecutionLimits,
} from '../../core/index.ts';
import * as z from '../../core/zod.ts';
import { builtinSpecCatalog } from '../../nodes/specs.ts';
import { lambdaTelemetry } from './lambda-telemetry.ts';
import { waitDepsFromEnv } from './wait-deps.ts';

/** What the stack puts in the environment of the engine and repair Lambdas. */
export const AwsEnvSchema = z.object({
  /** Set by the Lambda runtime; read when the first request is signed. */
  AWS_REGION: z.optional(z.string().check(z.minLength(1))),
  /** LocalStack and the tests point the table's requests elsewhere, as the SDK lets them. */
  AWS_ENDPOINT_URL_DYNAMODB: z.optional(z.url({ protocol: /^https?$/ })),
  AWS_ENDPOINT_URL_S3: z.optional(z.url({ protocol: /^https?$/ })),
  AWS_ENDPOINT_URL: z.optional(z.url({ protocol: /^https?$/ })),
  AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: z.optional(z.string()),
  TABLE_NAME: z.string().check(z.minLength(1)),
  /** The blob bucket; without it large outputs fail at the store's item limit instead of moving to S3. */
  BUCKET_NAME: z.optional(z.string().check(z.minLength(1))),
  /** Days until the table's TTL deletes a run's items. */
  FLOWMEND_RETENTION_DAYS: z.optional(z.coerce.number().check(z.int(), z.positive())),
  /** How long pflow's memo cache reuses a result, in seconds (0: off). */
  FLOWMEND_MEMO_TTL_S: z.optional(z.coerce.number().check(z.int(), z.nonnegative())),
  FLOWMEND_ANTHROPIC_SECRET_ID: z.optional(z.string().check(z.minLength(1))),
  FLOWMEND_MAX_ADVANCES_PER_EXECUTION: z.optional(z.coerce.number().check(z.int(), z.positive())),
  FLOWMEND_MAX_EXECUTION_MS: z.optional(z.coerce.number().check(z.int(), z.positive())),
  EXPRESS_STATE_MACHINE_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
  STANDARD_STATE_MACHINE_ARN: z.optional(z.string().check(z.startsWith('arn:'))),
});
export type AwsEnv = z.infer<typeof AwsEnvSchema>;

export function parseAwsEnv(env: NodeJS.ProcessEnv = process.env): AwsEnv {
  const parsed = AwsEnvSchema.safeParse(env);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigurationError(`Lambda environment is not the one the flowmend stack sets: ${issues}`);
  }
  return parsed.data;
}

/**
 * The store adapters the engine, repair and start Lambdas share, built once per cold start (clients
 * reuse their connections across calls). Nothing here loads the Anthropic SDK: only Repair and RunLlm
 * bundle it; nor the AWS SDK's DynamoDB client: the table is reached through DynamoJsonClient.
 */
export interface AwsDeps {
  env: AwsEnv;
  store: RunStore;
  blobs: BlobStore | undefined;
  /** The table's document client, for the registry the API keeps in the same table. */
  dynamo: DynamoDocument;
  /** Runs started here get a trace of their own (see lambdaTelemetry). */
  traced: boolean;
}

let cached: { key: string; deps: AwsDeps } | undefined;

export function awsDeps(env: NodeJS.ProcessEnv = process.env): AwsDeps {
  const parsed = parseAwsEnv(env);
  const key = JSON.stringify(parsed);
  if (cached?.key === key) return cached.deps;
  const region = parsed.AWS_REGION;
  const regionOf = async (): Promise<string> => {
    if (region === undefined) throw new ConfigurationError('AWS_REGION is not set (the Lambda runtime sets it; elsewhere, set it)');
    return region;
  };
  // The function role's credentials, which Lambda puts in the environment (lambda-credentials.ts says why).
  const credentials = credentialsFromEnv(env);
  const client = new DynamoJsonClient({ region: regionOf, credentials, endpoint: dynamoEndpointFromEnv(parsed) });
  const dynamo = createDocumentClient(client);
  const table = new DynamoRunStore({
    client: dynamo,
    tableName: parsed.TABLE_NAME,
    ...(parsed.FLOWMEND_RETENTION_DAYS === undefined ? {} : { retentionDays: parsed.FLOWMEND_RETENTION_DAYS }),
  });
  const s3Endpoint = s3EndpointFromEnv(parsed);
  const blobs =
    parsed.BUCKET_NAME === undefined
      ? undefined
      : new S3BlobStore({ bucket: parsed.BUCKET_NAME, region: regionOf, credentials, ...(s3Endpoint === undefined ? {} : { endpoint: s3Endpoint }) });
  // What each write of a run did goes to the function's log as JSON lines and EMF metrics (and spans to an OTLP endpoint when set).
  const telemetry = lambdaTelemetry(env);
  const stored = blobs === undefined ? table : new BlobOffloadRunStore(table, blobs);
  const deps: AwsDeps = {
    env: parsed,
    store: new ObservingRunStore(stored, telemetry.observer, (error) => telemetry.logger.warn('a run observer failed', { error: String(error) })),
    traced: telemetry.traced,
    blobs,
    dynamo,
  };
  cached = { key, deps };
  return deps;
}

/** What the Advance Lambda runs the engine with. */
export async function engineDepsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<EngineDeps & { blobs: BlobStore | undefined }> {
  const { store, blobs, env: parsed } = awsDeps(env);
  const executionLimits: ExecutionLimits = {
    maxAdvances: parsed.FLOWMEND_MAX_ADVANCES_PER_EXECUTION ?? DEFAULT_EXECUTION_LIMITS.maxAdvances,
    maxMs: parsed.FLOWMEND_MAX_EXECUTION_MS ?? DEFAULT_EXECUTION_LIMITS.maxMs,
  };
  const memoTtlS = parsed.FLOWMEND_MEMO_TTL_S ?? DEFAULT_MEMO_TTL_S;
  // pflow's memo cache, in the runs' table (its own key prefix, expired by the table's TTL); 0 turns it off.
  const memo = memoTtlS > 0 ? { store: new DynamoMemoStore({ client: awsDeps(env).dynamo, tableName: parsed.TABLE_NAME }), ttlS: memoTtlS } : undefined;
  // Flow control's keys, in the runs' table too. A Wait state's timestamp is cut to the second on AWS: starts are reserved on whole seconds.
  const flow = {
    store: new DynamoFlowStore({ client: awsDeps(env).dynamo, tableName: parsed.TABLE_NAME }),
    leaseMarginMs: DEFAULT_LEASE_MARGIN_MS,
    grantMs: DEFAULT_GRANT_MS,
    timerQuantumMs: 1000,
  };
  return {
    store,
    blobs,
    catalog: builtinSpecCatalog,
    now: Date.now,
    cache: new EngineCache(),
    ids: cryptoIds,
    executionLimits,
    memo,
    flow,
    ...waitDepsFromEnv(env),
  };
}
