import { describe, expect, it } from 'vitest';
import { BlobOffloadRunStore } from '../../../functions/adapters/blob-offload-run-store.ts';
import { DynamoRunStore } from '../../../functions/adapters/dynamo-run-store.ts';
import { ObservingRunStore } from '../../../functions/adapters/observing-run-store.ts';
import { S3BlobStore } from '../../../functions/adapters/s3-blob-store.ts';
import { ConfigurationError } from '../../../functions/core/errors.ts';
import { DEFAULT_EXECUTION_LIMITS } from '../../../functions/core/execution-limits.ts';
import { awsDeps, engineDepsFromEnv, parseAwsEnv } from '../../../functions/hosts/lambda/aws-deps.ts';

const env = { AWS_REGION: 'us-east-1', TABLE_NAME: 'Flowmend-Runs', FLOWMEND_RETENTION_DAYS: '90' };

describe('awsDeps', () => {
  it('rejects an environment without the table, naming the variable', () => {
    expect(() => parseAwsEnv({ BUCKET_NAME: 'b' })).toThrow(ConfigurationError);
    expect(() => parseAwsEnv({ BUCKET_NAME: 'b' })).toThrow(/TABLE_NAME/);
  });

  it("stores large outputs in the bucket when the stack names one, and tells the function's telemetry what each write did", async () => {
    const deps = await engineDepsFromEnv({ ...env, BUCKET_NAME: 'flowmend-blobs' });
    expect(deps.store).toBeInstanceOf(ObservingRunStore);
    expect((deps.store as ObservingRunStore).inner).toBeInstanceOf(BlobOffloadRunStore);
    expect(deps.blobs).toBeInstanceOf(S3BlobStore);
    expect(deps.catalog.has('shell') && deps.catalog.has('transform')).toBe(true);
    expect(deps.executionLimits).toEqual(DEFAULT_EXECUTION_LIMITS);
    expect((awsDeps(env).store as ObservingRunStore).inner).toBeInstanceOf(DynamoRunStore);
  });

  it('rejects a DynamoDB endpoint that is not an http(s) URL, naming the variable', () => {
    expect(() => parseAwsEnv({ TABLE_NAME: 't', AWS_ENDPOINT_URL_DYNAMODB: 'localhost:8000' })).toThrow(/AWS_ENDPOINT_URL_DYNAMODB/);
    expect(parseAwsEnv({ TABLE_NAME: 't', AWS_ENDPOINT_URL: 'http://127.0.0.1:8000' }).AWS_ENDPOINT_URL).toBe('http://127.0.0.1:8000');
  });

  it('builds the clients once per environment (once per cold start)', () => {
    expect(awsDeps(env)).toBe(awsDeps({ ...env }));
  });
});
