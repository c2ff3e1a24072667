// Child process for local-dynamo.test.ts: writes one run with steps and events to a state dir, prints what it used.
import { openLocalStore } from '../../functions/adapters/local-dynamo.ts';

const [stateDir, runId] = process.argv.slice(2) as [string, string];
const local = await openLocalStore(stateDir);
const now = Date.now();
await local.store.putRun(
  {
    runId, workflowName: 'writer', status: 'running', irVersion: 0, params: { writer: process.pid }, createdAt: now,
    updatedAt: now, seq: 0, eventSeq: 0, repairedNodes: [], pendingRecords: [], flushedThrough: 0, needsWalk: false, latest: {}, visits: {}, repairEnabled: false,
    maxRepairs: 0, repairAttempts: 0, warnings: [], mode: 'express',
    metrics: {
      nodesExecuted: 0, nodesCached: 0, llmInputTokens: 0, llmOutputTokens: 0, llmCostUsd: 0,
      repairInputTokens: 0, repairOutputTokens: 0, repairCostUsd: 0,
    },
  },
  { notExists: true },
);
for (let seq = 1; seq <= 30; seq++) {
  await local.store.putRecord(
    { runId, seq, nodeId: `n${seq}`, nodeType: 'shell', visit: 1, status: 'completed', cacheKey: `k${seq}`, sideEffects: false, irVersion: 0, startedAt: now },
    null,
  );
}
await local.store.appendEvents(
  Array.from({ length: 30 }, (_, i) => ({ runId, key: String(i).padStart(4, '0'), at: now, type: 'node_completed' as const })),
);
process.stdout.write(JSON.stringify({ endpoint: local.endpoint }));
await local.close();
