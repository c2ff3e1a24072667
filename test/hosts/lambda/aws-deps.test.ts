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

  it('sends blobs to the endpoint the SDK would use for S3 (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL), as it does for the table', async () => {
    const keys = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret' };
    const shared = (await engineDepsFromEnv({ ...env, ...keys, BUCKET_NAME: 'b1', AWS_ENDPOINT_URL: 'http://localhost:4566' })).blobs;
    expect(await shared?.uploadUrl('runs/r/steps/1.json', 60)).toMatch(/^http:\/\/localhost:4566\/b1\/runs\/r\/steps\/1\.json\?/);
    const own = (await engineDepsFromEnv({ ...env, ...keys, BUCKET_NAME: 'b2', AWS_ENDPOINT_URL: 'http://a:1', AWS_ENDPOINT_URL_S3: 'http://s3.local:9000' }))
      .blobs;
    expect(await own?.downloadUrl('runs/r/params/1.json', 60)).toMatch(/^http:\/\/s3\.local:9000\/b2\//);
    const real = (await engineDepsFromEnv({ ...env, ...keys, BUCKET_NAME: 'b3', AWS_ENDPOINT_URL: 'http://a:1', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' }))
      .blobs;
    expect(await real?.uploadUrl('runs/r/steps/1.json', 60)).toMatch(/^https:\/\/b3\.s3\.us-east-1\.amazonaws\.com\//);
  });

  it('builds the clients once per environment (once per cold start)', () => {
    expect(awsDeps(env)).toBe(awsDeps({ ...env }));
  });
});
