import { GetObjectCommand, NoSuchKey, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { type BlobRef, type BlobStore, blobRefOf } from '../core/index.ts';
import { StoreUnavailableError } from '../core/index.ts';
import { checkBlob } from './file-blob-store.ts';

/** Blobs in the stack's S3 bucket; upload URLs are presigned PUTs, so runners need no S3 permission. */
export class S3BlobStore implements BlobStore {
  constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
  ) {}

  async put(key: string, body: string): Promise<BlobRef> {
    try {
      await this.client.send(new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/json' }));
    } catch (error) {
      throw new StoreUnavailableError(`blob ${key} cannot be written to s3://${this.bucket}`, { cause: error, details: { key } });
    }
    return blobRefOf(key, body);
  }

  async get(ref: BlobRef): Promise<string> {
    let body: string | undefined;
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: ref.key }));
      body = await response.Body?.transformToString('utf8');
    } catch (error) {
      const missing = error instanceof NoSuchKey ? ' (missing: expired by the bucket lifecycle?)' : '';
      throw new StoreUnavailableError(`blob ${ref.key} cannot be read from s3://${this.bucket}${missing}`, { cause: error, details: { key: ref.key } });
    }
    checkBlob(ref, body ?? '');
    return body ?? '';
  }

  uploadUrl(key: string, expiresInS: number): Promise<string> {
    return getSignedUrl(this.client, new PutObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: expiresInS });
  }

  /** A presigned GET: a runner reads its large params without any S3 permission of its own. */
  downloadUrl(key: string, expiresInS: number): Promise<string> {
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: expiresInS });
  }
}
