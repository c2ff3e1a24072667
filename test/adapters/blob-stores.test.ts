import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatUrl } from '@aws-sdk/core/util';
import { S3RequestPresigner } from '@aws-sdk/s3-request-presigner';
import { HttpRequest } from '@smithy/core/protocols';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { putToUploadUrl } from '../../functions/adapters/blob-upload.ts';
import { FileBlobStore } from '../../functions/adapters/file-blob-store.ts';
import { NodeSha256 } from '../../functions/adapters/node-sha256.ts';
import { S3BlobStore } from '../../functions/adapters/s3-blob-store.ts';
import { type BlobStore, blobRefOf, stepBlobKey } from '../../functions/core/blob-store.ts';
import { StoreError } from '../../functions/core/errors.ts';
import { type FakeS3, startFakeS3 } from '../support/fake-s3.ts';

const BUCKET = 'flowmend-blobs';
let dir: string;
let s3: FakeS3;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowmend-blobs-'));
  s3 = await startFakeS3();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await s3.close();
});

const stores: [string, () => BlobStore][] = [
  ['FileBlobStore', () => new FileBlobStore(dir)],
  [
    'S3BlobStore',
    () =>
      new S3BlobStore({ bucket: BUCKET, endpoint: s3.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' } }),
  ],
];

describe.each(stores)('%s', (_name, makeStore) => {
  const body = JSON.stringify({ stdout: 'é'.repeat(300_000), exit_code: 0 });

  it('reads back what it stored, by reference', async () => {
    const store = makeStore();
    const ref = await store.put(stepBlobKey('run-put-get', 3), body);
    expect(ref).toEqual(blobRefOf('runs/run-put-get/steps/3.json', body));
    expect(ref.bytes).toBe(Buffer.byteLength(body));
    expect(await store.get(ref)).toBe(body);
  });

  it('accepts a body put to its upload URL by a process with no credentials', async () => {
    const store = makeStore();
    const key = stepBlobKey('run-upload', 1);
    await putToUploadUrl(await store.uploadUrl(key, 900), body);
    expect(await store.get(blobRefOf(key, body))).toBe(body);
  });

  it('rejects a blob that does not match its reference, and a missing one, with StoreError', async () => {
    const store = makeStore();
    const ref = await store.put(stepBlobKey('run-tamper', 1), body);
    await putToUploadUrl(await store.uploadUrl(ref.key, 60), `${body} `);
    await expect(store.get(ref)).rejects.toThrow(StoreError);
    await expect(store.get({ ...ref, key: stepBlobKey('run-never-written', 1) })).rejects.toThrow(StoreError);
  });
});

describe('FileBlobStore', () => {
  it('keeps blobs under <stateDir>/blobs and refuses keys that leave it', async () => {
    const store = new FileBlobStore(dir);
    const ref = await store.put('runs/r1/steps/1.json', '{"a":1}');
    expect(await readFile(join(dir, 'blobs', 'runs/r1/steps/1.json'), 'utf8')).toBe('{"a":1}');
    expect(ref.key).toBe('runs/r1/steps/1.json');
    await writeFile(join(dir, 'outside.json'), '{}');
    await expect(store.put('../outside.json', '{}')).rejects.toThrow(/escapes/);
  });
});

describe('S3BlobStore', () => {
  it('hands out presigned PUT URLs that expire, and signs its own requests', async () => {
    const store = new S3BlobStore({
      bucket: BUCKET,
      endpoint: s3.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
    });
    const url = new URL(await store.uploadUrl('runs/r2/steps/9.json', 600));
    expect(url.pathname).toBe(`/${BUCKET}/runs/r2/steps/9.json`);
    expect(url.searchParams.get('X-Amz-Expires')).toBe('600');
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    await store.put('runs/r2/steps/8.json', '{}');
    expect(s3.requests.at(-1)?.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
    expect(s3.objects.get(`${BUCKET}/runs/r2/steps/8.json`)).toBe('{}');
  });

  it("presigns the URLs the AWS SDK's S3 presigner signs for the same request (virtual-hosted on AWS, path-style on an endpoint)", async () => {
    const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'token/with+chars=' };
    const sdk = new S3RequestPresigner({ region: 'eu-west-3', credentials, sha256: NodeSha256 });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.UTC(2026, 10, 23, 12, 0, 0));
    try {
      for (const endpoint of [undefined, s3.endpoint]) {
        const ours = new S3BlobStore({
          bucket: BUCKET,
          region: async () => 'eu-west-3',
          credentials: async () => credentials,
          ...(endpoint ? { endpoint } : {}),
        });
        const key = 'runs/run 1+x/params/7.json';
        const url = new URL(
          endpoint ? `${endpoint}/${BUCKET}/runs/run%201%2Bx/params/7.json` : `https://${BUCKET}.s3.eu-west-3.amazonaws.com/runs/run%201%2Bx/params/7.json`,
        );
        for (const method of ['PUT', 'GET'] as const) {
          const request = new HttpRequest({
            method,
            protocol: url.protocol,
            hostname: url.hostname,
            ...(url.port ? { port: Number(url.port) } : {}),
            path: url.pathname,
            headers: {},
          });
          const expected = formatUrl(await sdk.presign(request, { expiresIn: 960 }));
          expect(await (method === 'PUT' ? ours.uploadUrl(key, 960) : ours.downloadUrl(key, 960))).toBe(expected);
        }
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('reports S3 refusing a write or a read as StoreUnavailableError naming the key', async () => {
    const store = new S3BlobStore({
      bucket: BUCKET,
      endpoint: 'http://127.0.0.1:9',
      region: 'us-east-1',
      credentials: { accessKeyId: 'A', secretAccessKey: 'B' },
    });
    await expect(store.put('runs/r3/steps/1.json', '{}')).rejects.toThrow(/runs\/r3\/steps\/1.json cannot be written/);
    await expect(store.get(blobRefOf('runs/r3/steps/1.json', '{}'))).rejects.toThrow(/cannot be read/);
  });
});
