import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BlobOffloadRunStore } from '../../functions/adapters/blob-offload-run-store.ts';
import { shrinkRunnerResult } from '../../functions/adapters/blob-upload.ts';
import { FileBlobStore } from '../../functions/adapters/file-blob-store.ts';
import {
  BLOB_MARKER,
  blobMarker,
  expandOutputs,
  MAX_INLINE_OUTPUT_BYTES,
  paramsBlobKey,
  runResultBlobKey,
  stepBlobKey,
  uploadTargetFor,
} from '../../functions/core/blob-store.ts';
import { InvalidInputError } from '../../functions/core/errors.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { RunnerResult } from '../../functions/core/node-type.ts';
import type { NodeRecord } from '../../functions/core/run-model.ts';
import { aNodeRecord, aRun } from '../support/builders.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowmend-offload-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const RUN = 'run-offload';
const step = (seq: number, outputs: Record<string, unknown>): NodeRecord =>
  aNodeRecord({ runId: RUN, seq, status: 'completed', sideEffects: false, action: 'default', outputs, startedAt: 1, finishedAt: 2 });
const big = { stdout: 'x'.repeat(MAX_INLINE_OUTPUT_BYTES + 1), exit_code: 0 };

const setup = () => {
  const inner = new MemoryRunStore();
  const blobs = new FileBlobStore(dir);
  return { inner, blobs, store: new BlobOffloadRunStore(inner, blobs) };
};

describe('BlobOffloadRunStore', () => {
  it('keeps small outputs in the record and moves large ones to a blob the reads restore', async () => {
    const { inner, store } = setup();
    await store.putRecord(step(1, { stdout: 'small', exit_code: 0 }));
    await store.putRecord(step(2, big));
    const [raw1, raw2] = await inner.getRecords(RUN, [1, 2]).then((s) => s.sort((a, b) => a.seq - b.seq));
    expect(raw1?.outputs).toEqual({ stdout: 'small', exit_code: 0 });
    expect(raw2?.outputs).toEqual({ [BLOB_MARKER]: expect.objectContaining({ key: stepBlobKey(RUN, 2) }) });
    expect(JSON.stringify(raw2).length).toBeLessThan(1_000);

    const restored = await store.getRecords(RUN, [2, 1]);
    expect(restored.find((s) => s.seq === 2)?.outputs).toEqual(big);
    expect((await store.listRecords(RUN)).map((s) => s.outputs)).toEqual([{ stdout: 'small', exit_code: 0 }, big]);
  });

  it('records the reference of outputs a runner already uploaded, and restores them', async () => {
    const { inner, blobs, store } = setup();
    const upload = { key: stepBlobKey(RUN, 7), url: await blobs.uploadUrl(stepBlobKey(RUN, 7)) };
    const result: RunnerResult = { kind: 'ok', outputs: big, action: 'default', durationMs: 5 };
    const shrunk = await shrinkRunnerResult(result, upload);
    expect(JSON.stringify(shrunk).length).toBeLessThan(1_000);
    await store.putRecord(step(7, shrunk.outputs ?? {}));
    expect((await inner.getRecords(RUN, [7]))[0]?.outputs).toEqual(shrunk.outputs);
    expect((await store.getRecords(RUN, [7]))[0]?.outputs).toEqual(big);
  });

  it('leaves a small runner result alone', async () => {
    const { blobs } = setup();
    const result: RunnerResult = { kind: 'failed', error: { code: 'EXIT_NONZERO', message: 'x' }, outputs: { stderr: 'boom' }, durationMs: 1 };
    expect(await shrinkRunnerResult(result, { key: 'k', url: await blobs.uploadUrl('k') })).toBe(result);
  });

  it("refuses a reference to another step's blob (a runner must not read other runs through the engine)", async () => {
    const { blobs, store } = setup();
    const victim = await blobs.put(stepBlobKey('other-run', 1), JSON.stringify({ secret: 'theirs' }));
    await expect(store.putRecord(step(8, { [BLOB_MARKER]: victim }))).rejects.toThrow(InvalidInputError);
  });
});

describe('BlobOffloadRunStore.removeOrphanBlobs (a held run, after a commit that failed)', () => {
  it('removes the step and result blobs nothing committed refers to, and keeps the rest', async () => {
    const { inner, blobs, store } = setup();
    const runId = 'run-orphans';
    const body = JSON.stringify(big);
    const record = (seq: number) => aNodeRecord({ runId, seq, status: 'completed', outputs: big });
    await store.putRecord(record(1)); // committed as its own item, its blob referenced
    const pending = await blobs.put(stepBlobKey(runId, 2), body); // uploaded by a runner, its record still in the run item
    const result = await blobs.put(runResultBlobKey(runId), body);
    await inner.putRun(aRun({ runId, pendingRecords: [{ ...record(2), outputs: blobMarker(pending) }], outputs: blobMarker(result) }), { notExists: true });
    await blobs.put(stepBlobKey(runId, 3), body); // written for a commit that failed
    await blobs.put(paramsBlobKey(runId, 3), body); // each step writes its own params afresh: left alone
    await blobs.put(stepBlobKey('another-run', 3), body);

    expect(await store.removeOrphanBlobs(runId)).toEqual([stepBlobKey(runId, 3)]);
    expect((await blobs.keysUnder(`runs/${runId}/`)).sort()).toEqual(
      [paramsBlobKey(runId, 3), runResultBlobKey(runId), stepBlobKey(runId, 1), stepBlobKey(runId, 2)].sort(),
    );
    expect(await blobs.keysUnder('runs/another-run/')).toEqual([stepBlobKey('another-run', 3)]);
    expect((await store.getRun(runId))?.outputs).toEqual(big);
    expect(await store.removeOrphanBlobs('run-without-blobs')).toEqual([]);
  });
});

describe('expandOutputs (what Advance does with a runner result)', () => {
  it("reads uploaded outputs back, passes inline ones through, and refuses another step's blob", async () => {
    const { blobs } = setup();
    const target = await uploadTargetFor(blobs, RUN, 11, 60);
    expect(target.key).toBe(stepBlobKey(RUN, 11));
    const shrunk = await shrinkRunnerResult({ kind: 'ok', outputs: big, action: 'default', durationMs: 1 }, target);
    expect(await expandOutputs(blobs, RUN, 11, shrunk.outputs)).toEqual(big);
    expect(await expandOutputs(blobs, RUN, 12, { stdout: 'x' })).toEqual({ stdout: 'x' });
    await expect(expandOutputs(blobs, RUN, 12, shrunk.outputs)).rejects.toThrow(InvalidInputError);
  });
});
