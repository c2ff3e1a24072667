import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import * as z from 'zod';
import { BlobOffloadRunStore } from '../../adapters/blob-offload-run-store.ts';
import { createDocumentClient, DynamoRunStore } from '../../adapters/dynamo-run-store.ts';
import { S3BlobStore } from '../../adapters/s3-blob-store.ts';
import type { BlobStore, EngineDeps, RunStore } from '../../core/index.ts';
import { ConfigurationError, cryptoIds, DEFAULT_EXECUTION_LIMITS, EngineCache, type ExecutionLimits } from '../../core/index.ts';
import { builtinSpecCatalog } from '../../nodes/specs.ts';

/** What the stack puts in the environment of the engine and repair Lambdas. */
export const AwsEnvSchema = z.object({
  TABLE_NAME: z.string().min(1),
  /** The blob bucket; without it large outputs fail at the store's item limit instead of moving to S3. */
  BUCKET_NAME: z.string().min(1).optional(),
  /** Days until the table's TTL deletes a run's items. */
  FLOWMEND_RETENTION_DAYS: z.coerce.number().int().positive().optional(),
  FLOWMEND_ANTHROPIC_SECRET_ID: z.string().min(1).optional(),
  FLOWMEND_MAX_ADVANCES_PER_EXECUTION: z.coerce.number().int().positive().optional(),
  FLOWMEND_MAX_EXECUTION_MS: z.coerce.number().int().positive().optional(),
  EXPRESS_STATE_MACHINE_ARN: z.string().startsWith('arn:').optional(),
  STANDARD_STATE_MACHINE_ARN: z.string().startsWith('arn:').optional(),
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
 * The store adapters the engine, repair and start Lambdas share, built once per cold start (SDK clients
 * reuse their connections across calls). Nothing here loads the Anthropic SDK: only Repair and RunLlm bundle it.
 */
export interface AwsDeps {
  env: AwsEnv;
  store: RunStore;
  blobs: BlobStore | undefined;
}

let cached: { key: string; deps: AwsDeps } | undefined;

export function awsDeps(env: NodeJS.ProcessEnv = process.env): AwsDeps {
  const parsed = parseAwsEnv(env);
  const key = JSON.stringify(parsed);
  if (cached?.key === key) return cached.deps;
  const client = new DynamoDBClient({});
  const dynamo = createDocumentClient(client);
  const table = new DynamoRunStore({
    client: dynamo,
    tableName: parsed.TABLE_NAME,
    ...(parsed.FLOWMEND_RETENTION_DAYS === undefined ? {} : { retentionDays: parsed.FLOWMEND_RETENTION_DAYS }),
  });
  // S3 signs with the DynamoDB client's region and credentials (the Lambda's role, cached and refreshed by the SDK).
  const blobs =
    parsed.BUCKET_NAME === undefined
      ? undefined
      : new S3BlobStore({ bucket: parsed.BUCKET_NAME, region: client.config.region, credentials: client.config.credentials });
  const deps: AwsDeps = {
    env: parsed,
    store: blobs === undefined ? table : new BlobOffloadRunStore(table, blobs),
    blobs,
  };
  cached = { key, deps };
  return deps;
}

/** What the Advance Lambda runs the engine with. */
export async function engineDepsFromEnv(env: NodeJS.ProcessEnv = process.env): Promise<EngineDeps & { blobs: BlobStore | undefined }> {
  const { store, blobs } = awsDeps(env);
  const { env: parsed } = awsDeps(env);
  const executionLimits: ExecutionLimits = {
    maxAdvances: parsed.FLOWMEND_MAX_ADVANCES_PER_EXECUTION ?? DEFAULT_EXECUTION_LIMITS.maxAdvances,
    maxMs: parsed.FLOWMEND_MAX_EXECUTION_MS ?? DEFAULT_EXECUTION_LIMITS.maxMs,
  };
  return { store, blobs, catalog: builtinSpecCatalog, now: Date.now, cache: new EngineCache(), ids: cryptoIds, executionLimits };
}
