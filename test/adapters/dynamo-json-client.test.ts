import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDynamoClient, type DynaliteServer, startDynalite } from '../../functions/adapters/dynalite-server.ts';
import { DynamoServiceError } from '../../functions/adapters/dynamo-errors.ts';
import { dynamoEndpointFromEnv, regionalDynamoEndpoint } from '../../functions/adapters/dynamo-json-client.ts';
import { DynamoRegistryStore } from '../../functions/adapters/dynamo-registry-store.ts';
import { createDocumentClient, DynamoRunStore } from '../../functions/adapters/dynamo-run-store.ts';
import { ensureTable } from '../../functions/adapters/table-schema.ts';
import { StaleRunError, StoreUnavailableError } from '../../functions/core/errors.ts';
import { aRun } from '../support/builders.ts';
import { dynamoErrorAnswer, type ReceivedRequest, startDynamoProxy } from './dynamo-proxy.ts';

const TABLE = 'flowmend-client';
const CREDENTIALS = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token-1' };
let dynalite: DynaliteServer;
let counter = 0;
const newRunId = () => `client_${process.pid}_${++counter}`;

beforeAll(async () => {
  dynalite = await startDynalite();
  await ensureTable(createLocalDynamoClient(dynalite.endpoint), TABLE);
});
afterAll(async () => {
  await dynalite?.close();
});

const hmac = (key: string | Buffer, data: string): Buffer => createHmac('sha256', key).update(data).digest();
const sha256 = (data: string): string => createHash('sha256').update(data).digest('hex');

/**
 * SigV4 recomputed from what arrived, with node:crypto only (not the signer under test): the canonical
 * request over the headers the Authorization header says were signed, their values as received.
 */
function verifySigV4(request: ReceivedRequest, secretAccessKey: string): { valid: boolean; signedHeaders: string[] } {
  const auth = String(request.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!match) return { valid: false, signedHeaders: [] };
  const [, day = '', region = '', service = '', signedList = '', signature] = match;
  const signedHeaders = signedList.split(';');
  const canonicalHeaders = signedHeaders.map((name) => `${name}:${String(request.headers[name] ?? '').trim()}\n`).join('');
  const canonical = [request.method, request.path, '', canonicalHeaders, signedList, sha256(request.body)].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', String(request.headers['x-amz-date']), scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, day), region), service), 'aws4_request');
  return { valid: hmac(key, toSign).toString('hex') === signature, signedHeaders };
}

describe('DynamoJsonClient', () => {
  it('sends requests whose SigV4 signature verifies over exactly the headers that arrived', async () => {
    const proxy = await startDynamoProxy(dynalite.endpoint, (_request, forward) => forward());
    try {
      const client = createLocalDynamoClient(proxy.endpoint, { credentials: CREDENTIALS });
      const store = new DynamoRunStore({ client: createDocumentClient(client), tableName: TABLE });
      const run = aRun({ runId: newRunId() });
      await store.putRun(run, { notExists: true });
      expect(await store.getRun(run.runId)).toEqual(run);
      client.destroy();
      expect(proxy.received.map((r) => r.headers['x-amz-target'])).toEqual(['DynamoDB_20120810.PutItem', 'DynamoDB_20120810.GetItem']);
      for (const request of proxy.received) {
        const { valid, signedHeaders } = verifySigV4(request, CREDENTIALS.secretAccessKey);
        expect(valid).toBe(true);
        expect(signedHeaders).toEqual(expect.arrayContaining(['host', 'content-type', 'x-amz-date', 'x-amz-target', 'x-amz-security-token']));
        expect(request.headers['content-type']).toBe('application/x-amz-json-1.0');
        // Nothing arrived unsigned but the signature itself and the connection's own header.
        const unsigned = Object.keys(request.headers).filter((name) => !signedHeaders.includes(name));
        expect(unsigned.sort()).toEqual(['authorization', 'connection']);
      }
      // The check can fail: one changed byte of a signed header or of the body breaks it.
      const [put] = proxy.received;
      if (!put) throw new Error('no request arrived');
      expect(verifySigV4({ ...put, headers: { ...put.headers, 'x-amz-target': 'DynamoDB_20120810.DeleteItem' } }, CREDENTIALS.secretAccessKey).valid).toBe(
        false,
      );
      expect(verifySigV4({ ...put, body: `${put.body} ` }, CREDENTIALS.secretAccessKey).valid).toBe(false);
      expect(verifySigV4(put, 'another-secret').valid).toBe(false);
    } finally {
      await proxy.close();
    }
  });

  it('retries a throttled request, a 500 and a dropped connection, and the call succeeds', async () => {
    const faults: Array<'throttle' | 'error' | 'reset'> = ['throttle', 'error', 'reset'];
    const proxy = await startDynamoProxy(dynalite.endpoint, async (_request, forward) => {
      const fault = faults.shift();
      if (fault === 'throttle') return dynamoErrorAnswer(400, 'ThrottlingException', 'Rate of requests exceeds the allowed throughput.');
      if (fault === 'error') return dynamoErrorAnswer(500, 'InternalServerError', 'Internal server error');
      if (fault === 'reset') return 'reset';
      return forward();
    });
    try {
      const client = createLocalDynamoClient(proxy.endpoint, { retryBaseMs: 1, throttlingRetryBaseMs: 1 });
      const store = new DynamoRunStore({ client: createDocumentClient(client), tableName: TABLE });
      const run = aRun({ runId: newRunId() });
      await store.putRun(run, { notExists: true });
      client.destroy();
      expect(proxy.received).toHaveLength(4);
      expect(new Set(proxy.received.map((r) => r.body)).size).toBe(1);
      expect(
        await new DynamoRunStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: TABLE }).getRun(run.runId),
      ).toEqual(run);
    } finally {
      await proxy.close();
    }
  });

  it('gives up after maxAttempts with the last error, and never retries a client error', async () => {
    const proxy = await startDynamoProxy(dynalite.endpoint, async (request) =>
      String(request.headers['x-amz-target']).endsWith('GetItem')
        ? dynamoErrorAnswer(400, 'ProvisionedThroughputExceededException', 'throughput exceeded')
        : dynamoErrorAnswer(400, 'ValidationException', 'One or more parameter values were invalid'),
    );
    try {
      const client = createLocalDynamoClient(proxy.endpoint, { maxAttempts: 3, retryBaseMs: 1, throttlingRetryBaseMs: 1 });
      const throttled = await client.send('GetItem', { TableName: TABLE, Key: { pk: { S: 'a' }, sk: { S: 'b' } } }).catch((e: unknown) => e);
      expect(throttled).toBeInstanceOf(DynamoServiceError);
      expect(throttled).toMatchObject({ name: 'ProvisionedThroughputExceededException', statusCode: 400, throttling: true });
      expect(proxy.received).toHaveLength(3);
      const invalid = await client.send('PutItem', { TableName: TABLE, Item: {} }).catch((e: unknown) => e);
      expect(invalid).toMatchObject({ name: 'ValidationException', message: 'One or more parameter values were invalid' });
      expect(proxy.received).toHaveLength(4);
      client.destroy();
    } finally {
      await proxy.close();
    }
  });

  it('raises DynamoDB exceptions by name, as the stores inspect them: failed conditions, cancelled transactions', async () => {
    const run = aRun({ runId: newRunId() });
    const store = new DynamoRunStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: TABLE });
    await store.putRun(run, { notExists: true });
    // dynalite's own ConditionalCheckFailedException reaches the stores as their stale-write and idempotency outcomes.
    await expect(store.putRun({ ...run, seq: 5 }, { seq: 3 })).rejects.toBeInstanceOf(StaleRunError);
    const registry = new DynamoRegistryStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: TABLE });
    const record = { key: `k-${newRunId()}`, runId: run.runId, createdAt: 1, expiresAt: Date.now() + 60_000 };
    expect(await registry.claimIdempotencyKey(record, Date.now())).toEqual({ claimed: true });
    expect(await registry.claimIdempotencyKey({ ...record, runId: 'other' }, Date.now())).toEqual({ claimed: false, runId: run.runId });

    // dynalite has no transactions: a proxy answers as DynamoDB does, with a stored item in wire form.
    const reasons = [{ Code: 'None' }, { Code: 'ConditionalCheckFailed', Message: 'The conditional request failed', Item: { n: { N: '7' }, tag: { S: 'x' } } }];
    const proxy = await startDynamoProxy(dynalite.endpoint, async () =>
      dynamoErrorAnswer(400, 'TransactionCanceledException', 'Transaction cancelled, please refer cancellation reasons for specific reasons', {
        CancellationReasons: reasons,
      }),
    );
    try {
      const client = createLocalDynamoClient(proxy.endpoint);
      const raw = await client.send('TransactWriteItems', { TransactItems: [] }).catch((e: unknown) => e);
      expect(raw).toMatchObject({ name: 'TransactionCanceledException', cancellationReasons: reasons });
      const plain = await createDocumentClient(client)
        .send('GetItem', { TableName: TABLE, Key: { pk: 'a', sk: 'b' } })
        .catch((e: unknown) => e);
      expect(plain).toBeInstanceOf(DynamoServiceError);
      expect((plain as DynamoServiceError).cancellationReasons?.[1]).toEqual({ ...reasons[1], Item: { n: 7, tag: 'x' } });
      // Through a store, any other exception is a StoreUnavailableError that keeps it as the cause.
      const failed = await new DynamoRunStore({ client: createDocumentClient(client), tableName: TABLE }).getRun('x').catch((e: unknown) => e);
      expect(failed).toBeInstanceOf(StoreUnavailableError);
      expect((failed as Error).cause).toMatchObject({ name: 'TransactionCanceledException' });
      client.destroy();
    } finally {
      await proxy.close();
    }
  });

  it('round-trips binary attributes, big numbers and nested values through the document client', async () => {
    const doc = createDocumentClient(createLocalDynamoClient(dynalite.endpoint));
    const bytes = Buffer.from([0, 1, 2, 250, 255]);
    const item = { pk: `bin-${newRunId()}`, sk: 'x', blob: bytes, big: 2 ** 60, nested: { list: [1, 'two', { three: true }], empty: null } };
    await doc.send('PutItem', { TableName: TABLE, Item: item });
    const { Item: read } = await doc.send('GetItem', { TableName: TABLE, Key: { pk: item.pk, sk: 'x' }, ConsistentRead: true });
    expect(Buffer.from(read?.blob as Uint8Array).equals(bytes)).toBe(true);
    expect(read).toMatchObject({ big: 2 ** 60, nested: item.nested });
  });
});

describe('dynamoEndpointFromEnv', () => {
  it('takes the service variable first, then the general one, unless configured endpoints are ignored (as the SDK)', () => {
    expect(dynamoEndpointFromEnv({ AWS_ENDPOINT_URL: 'http://a:1', AWS_ENDPOINT_URL_DYNAMODB: 'http://b:2' })).toBe('http://b:2');
    expect(dynamoEndpointFromEnv({ AWS_ENDPOINT_URL: 'http://a:1' })).toBe('http://a:1');
    expect(dynamoEndpointFromEnv({ AWS_ENDPOINT_URL: 'http://a:1', AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true' })).toBeUndefined();
    expect(dynamoEndpointFromEnv({})).toBeUndefined();
  });

  it('falls back to the regional endpoint of the partition', () => {
    expect(regionalDynamoEndpoint('eu-west-1')).toBe('https://dynamodb.eu-west-1.amazonaws.com');
    expect(regionalDynamoEndpoint('cn-north-1')).toBe('https://dynamodb.cn-north-1.amazonaws.com.cn');
  });
});
