import { createHash } from 'node:crypto';
import { InvalidInputError } from './errors.ts';
import { runnerWorstCaseS } from './execution-limits.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import * as z from './zod.ts';

/**
 * Node outputs too large for a state payload (256 KiB) or a table item (400 KB) are stored as blobs;
 * the step record and the runner result keep a reference in their place. The limit leaves room for
 * the rest of the record and of the state.
 */
export const MAX_INLINE_OUTPUT_BYTES = 200 * 1024;

export const BlobRefSchema = builtOnFirstUse(() =>
  z.object({
    key: z.string().check(z.minLength(1)),
    bytes: z.int().check(z.nonnegative()),
    sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  }),
);
export type BlobRef = z.infer<typeof BlobRefSchema>;

/** Where a runner may put a large result without any credentials of its own. */
export const BlobUploadSchema = builtOnFirstUse(() => z.object({ url: z.url(), key: z.string().check(z.minLength(1)) }));
export type BlobUpload = z.infer<typeof BlobUploadSchema>;

/** Key under which a value in `outputs` stands for outputs stored as a blob: `{ "$blob": BlobRef }`. */
export const BLOB_MARKER = '$blob';

/** Large node outputs, by key. Rejects with `StoreError` when the backing store fails or a blob is missing. */
export interface BlobStore {
  put(key: string, body: string): Promise<BlobRef>;
  /** The body of a blob, checked against the reference's size and hash. */
  get(ref: BlobRef): Promise<string>;
  /** A URL that accepts one HTTP PUT (or file write, locally) of the body for `key`, for `expiresInS` seconds. */
  uploadUrl(key: string, expiresInS: number): Promise<string>;
  /** A URL that answers an HTTP GET (or file read, locally) with the body of `key`, for `expiresInS` seconds. */
  downloadUrl(key: string, expiresInS: number): Promise<string>;
}

/**
 * Largest resolved params (serialised) sent inline in a RunNode payload; larger ones go as a blob and a
 * download URL, so neither the Advance output nor the runner state's output (params + a result of up to
 * MAX_INLINE_OUTPUT_BYTES + the URLs) can reach the 256 KiB state limit, whatever upstream nodes produced.
 */
export const MAX_INLINE_PARAMS_BYTES = 32 * 1024;

/** Resolved params handed to a runner by reference: where to read them, and what they must hash to. */
export const ParamsRefSchema = builtOnFirstUse(() => z.object({ url: z.url(), ref: z.lazy(() => BlobRefSchema) }));
export type ParamsRef = z.infer<typeof ParamsRefSchema>;

/** Every blob key starts with this (the stack grants S3 access to this prefix only). */
export const BLOB_PREFIX = 'runs/';

/** The one blob key of a step's outputs, so a reference can be checked against the record holding it. */
export const stepBlobKey = (runId: string, seq: number): string => `${BLOB_PREFIX}${runId}/steps/${seq}.json`;

/** The one blob key of a run's result (its declared outputs), when it is too large for the run item. */
export const runResultBlobKey = (runId: string): string => `${BLOB_PREFIX}${runId}/result.json`;

export const utf8Length = (text: string): number => new TextEncoder().encode(text).byteLength;

export const blobRefOf = (key: string, body: string): BlobRef => ({
  key,
  bytes: utf8Length(body),
  sha256: createHash('sha256').update(body, 'utf8').digest('hex'),
});

export const blobMarker = (ref: BlobRef): Record<string, unknown> => ({ [BLOB_MARKER]: ref });

/** The reference if `outputs` is exactly a blob marker. */
export const blobRefIn = (outputs: Record<string, unknown> | undefined): BlobRef | undefined => {
  if (outputs === undefined || Object.keys(outputs).length !== 1) return undefined;
  const parsed = BlobRefSchema.safeParse(outputs[BLOB_MARKER]);
  return parsed.success ? parsed.data : undefined;
};

/** The blob of a step's resolved params, when they are too large to send inline. */
export const paramsBlobKey = (runId: string, seq: number): string => `${BLOB_PREFIX}${runId}/params/${seq}.json`;

/** Room a presigned URL keeps past the last moment it may be used. */
const URL_MARGIN_S = 5 * 60;

/**
 * How long the URLs a runner gets (its upload target, its params) must stay valid: they are signed once,
 * when the step is prepared, and the state machine hands the same payload to every try of the Task, so
 * they must outlive the last try a node of `timeoutS` may get (runnerWorstCaseS: every retry and every
 * wait between tries) plus the wait before it (`waitS`, a batch item's retry_wait).
 */
export const blobUrlTtlS = (timeoutS: number, waitS = 0): number => Math.ceil(runnerWorstCaseS(timeoutS) + waitS + URL_MARGIN_S);

/** Where the runner of step `seq` may put outputs too large for the state payload, valid for `ttlS` seconds. */
export const uploadTargetFor = async (blobs: BlobStore, runId: string, seq: number, ttlS: number): Promise<BlobUpload> => {
  const key = stepBlobKey(runId, seq);
  return { key, url: await blobs.uploadUrl(key, ttlS) };
};

/**
 * The outputs a runner result stands for: read back from the blob when the runner uploaded them.
 * Only the blob of this very step is accepted (a runner's result is untrusted).
 */
export const expandOutputs = async (
  blobs: BlobStore,
  runId: string,
  seq: number,
  outputs: Record<string, unknown> | undefined,
): Promise<Record<string, unknown> | undefined> => {
  const ref = blobRefIn(outputs);
  if (ref === undefined) return outputs;
  if (ref.key !== stepBlobKey(runId, seq)) throw new InvalidInputError(`step ${seq} of run ${runId} refers to blob ${ref.key}, not its own`);
  return JSON.parse(await blobs.get(ref)) as Record<string, unknown>;
};
