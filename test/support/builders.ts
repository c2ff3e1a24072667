import { type NodeRecord, type RunItem, RunMetricsSchema } from '../../functions/core/run-model.ts';

/** A running run item with every field set to its value at creation; override what a test is about. */
export const aRun = (overrides: Partial<RunItem> & Pick<RunItem, 'runId'>): RunItem => ({
  workflowName: 'workflow',
  status: 'running',
  irVersion: 0,
  params: {},
  createdAt: 0,
  updatedAt: 0,
  seq: 0,
  eventSeq: 0,
  repairedNodes: [],
  pendingRecords: [],
  flushedThrough: 0,
  needsWalk: false,
  latest: {},
  visits: {},
  repairEnabled: true,
  maxRepairs: 3,
  repairAttempts: 0,
  repairs: [],
  warnings: [],
  owner: { id: 'owner-a', since: 0 },
  metrics: RunMetricsSchema.parse({}),
  mode: 'express',
  ...overrides,
});

/** The record of visit 1 of node `n<seq>` (a shell node, still running); override what a test is about. */
export const aNodeRecord = (overrides: Partial<NodeRecord> & Pick<NodeRecord, 'runId' | 'seq'>): NodeRecord => ({
  nodeId: `n${overrides.seq}`,
  nodeType: 'shell',
  visit: 1,
  status: 'running',
  cacheKey: `key-${overrides.seq}`,
  sideEffects: true,
  irVersion: 0,
  startedAt: overrides.seq,
  ...overrides,
});
