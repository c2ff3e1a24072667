import type { Advance } from './advance.ts';
import { nodeById, type WorkflowNode } from './ir.ts';
import type { NodeRecord, RunItem } from './run-model.ts';
import type { AdvanceInput } from './state-io.ts';
import { isWaitType } from './waits/wait-nodes.ts';

/**
 * Whether a visit reads and writes pflow's memo cache: `cache: true|false` on the node, on by default for
 * llm nodes only. A batch and a workflow node keep their own records instead; a host without a memo store
 * memoizes nothing.
 */
export const memoizes = (step: Advance, node: WorkflowNode): boolean =>
  // A wait's result is never another run's: it would skip the wait.
  step.deps.memo !== undefined && node.batch === undefined && node.type !== 'workflow' && !isWaitType(node.type) && (node.cache ?? node.type === 'llm');

/**
 * A result of another run with the same cache key (node type and resolved params, so never another
 * input's), as the input that records it, as if the node's runner had returned it. Inside a loop, reads
 * are off (pflow's rule: an iteration reads state that the previous one changed), and in a run started
 * or resumed with pflow's `--no-cache`.
 */
export const memoHit = async (step: Advance, node: WorkflowNode, current: NonNullable<RunItem['current']>): Promise<AdvanceInput | undefined> => {
  const memo = step.deps.memo;
  if (!memo || node.loop !== undefined || step.run.noCache === true || !memoizes(step, node)) return undefined;
  const entry = await memo.store.getMemo(current.cacheKey, step.deps.now());
  if (!entry || entry.nodeType !== node.type) return undefined;
  return {
    kind: 'run',
    runId: step.run.runId,
    owner: step.owner,
    seq: current.seq,
    node: { id: node.id, type: node.type, params: {}, cacheKey: current.cacheKey, timeoutS: 1 },
    result: { kind: 'ok', outputs: entry.outputs, action: entry.action, durationMs: 0 },
  };
};

/** Keeps a successful visit's result for other runs, until the memo's TTL runs out. */
export const rememberResult = async (step: Advance, record: NodeRecord): Promise<void> => {
  const memo = step.deps.memo;
  const node = nodeById(step.ir, record.nodeId);
  if (!memo || !node || !memoizes(step, node) || record.status !== 'completed' || record.cacheKey === '') return;
  const now = step.deps.now();
  await memo.store.putMemo({
    key: record.cacheKey,
    nodeType: record.nodeType,
    outputs: record.outputs ?? {},
    action: record.action ?? 'default',
    ...(record.usage ? { usage: record.usage } : {}),
    storedAt: now,
    expiresAt: now + memo.ttlS * 1000,
  });
};
