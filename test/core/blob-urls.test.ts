import { describe, expect, it } from 'vitest';
import { S3BlobStore } from '../../functions/adapters/s3-blob-store.ts';
import { advanceRun } from '../../functions/core/engine.ts';
import { EngineCache } from '../../functions/core/engine-cache.ts';
import { runnerWorstCaseS } from '../../functions/core/execution-limits.ts';
import { sequentialIds } from '../../functions/core/ids.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { parseWorkflow } from '../../functions/core/parse-workflow.ts';
import { createRun } from '../../functions/core/run-lifecycle.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

/**
 * The upload URL a runner gets is signed once, when its step is prepared, and the state machine gives
 * the same payload to every try of the Task: it must still be valid at the last try a node may get.
 */
describe('the presigned URLs of a step', () => {
  it("outlive every try of the node's Task (its timeout, every retry and every wait between tries)", async () => {
    const store = new MemoryRunStore();
    const blobs = new S3BlobStore({ bucket: 'b', region: 'us-east-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' } });
    const parsed = parseWorkflow({ nodes: [{ id: 'long', type: 'shell', params: { command: 'sleep 1', timeout_s: 900 } }] });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    await createRun(store, {
      runId: 'urls-1',
      workflow: parsed.workflow,
      workflowName: 'w',
      params: {},
      owner: { id: 'o', since: 0 },
      repairEnabled: false,
      maxRepairs: 0,
      now: 0,
    });
    const outcome = await advanceRun(
      { kind: 'start', runId: 'urls-1', owner: 'o' },
      { store, blobs, catalog: builtinCatalog, now: () => 1_000, cache: new EngineCache(), ids: sequentialIds() },
    );
    if (outcome.kind !== 'run') throw new Error(`expected a run step, got ${outcome.kind}`);
    const url = new URL(outcome.node.upload?.url ?? '');
    expect(Number(url.searchParams.get('X-Amz-Expires'))).toBeGreaterThan(runnerWorstCaseS(900));
  });
});
