import { readFile } from 'node:fs/promises';
import type { RunnerResult } from '../core/index.ts';
import {
  type BlobUpload,
  blobMarker,
  blobRefOf,
  ConfigurationError,
  MAX_INLINE_OUTPUT_BYTES,
  type ParamsRef,
  TransientError,
  utf8Length,
} from '../core/index.ts';
import { checkBlob, filePathOfUrl, writeFileAtomically } from './file-blob-store.ts';

/** Puts a body to an upload URL: an HTTP PUT (a presigned S3 URL) or, locally, a `file:` write. */
export async function putToUploadUrl(url: string, body: string): Promise<void> {
  if (url.startsWith('file:')) {
    await writeFileAtomically(filePathOfUrl(url), body);
    return;
  }
  let response: Response;
  try {
    response = await fetch(url, { method: 'PUT', body });
  } catch (error) {
    throw new TransientError(`uploading a large node output failed: ${(error as Error).message}`, { cause: error });
  }
  if (response.status >= 500 || response.status === 429) {
    throw new TransientError(`uploading a large node output failed: HTTP ${response.status}`);
  }
  if (!response.ok) {
    throw new ConfigurationError(`uploading a large node output was refused: HTTP ${response.status} ${await response.text()}`);
  }
}

/**
 * A runner result that fits in the state payload: outputs over the limit go up to `upload` and are
 * replaced by a reference the store reads back. Without an upload target the result is returned as is.
 */
export async function shrinkRunnerResult(
  result: RunnerResult,
  upload: BlobUpload | undefined,
  maxInlineBytes = MAX_INLINE_OUTPUT_BYTES,
): Promise<RunnerResult> {
  if (upload === undefined || result.outputs === undefined) return result;
  const body = JSON.stringify(result.outputs);
  if (utf8Length(body) <= maxInlineBytes) return result;
  await putToUploadUrl(upload.url, body);
  return { ...result, outputs: blobMarker(blobRefOf(upload.key, body)) };
}

/**
 * Reads params handed over by reference: an HTTP GET of a presigned URL (AWS) or a `file:` read
 * (locally), checked against the reference's size and hash.
 */
export async function readParamsRef(paramsRef: ParamsRef): Promise<Record<string, unknown>> {
  let body: string;
  if (paramsRef.url.startsWith('file:')) {
    body = await readFile(filePathOfUrl(paramsRef.url), 'utf8');
  } else {
    let response: Response;
    try {
      response = await fetch(paramsRef.url);
    } catch (error) {
      throw new TransientError(`reading a node's params failed: ${(error as Error).message}`, { cause: error });
    }
    if (response.status >= 500 || response.status === 429) throw new TransientError(`reading a node's params failed: HTTP ${response.status}`);
    if (!response.ok) throw new ConfigurationError(`reading a node's params was refused: HTTP ${response.status} ${await response.text()}`);
    body = await response.text();
  }
  checkBlob(paramsRef.ref, body);
  return JSON.parse(body) as Record<string, unknown>;
}
