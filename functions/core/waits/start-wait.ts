import type { Advance } from '../advance.ts';
import { boundValue } from '../bound-value.ts';
import type { WorkflowNode } from '../ir.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import type * as z from '../zod.ts';
import { hashCallbackToken, mintCallbackToken } from './callback-token.ts';
import type { RecordNode } from './continue-wait.ts';
import { newWaitId, pauseRun } from './pause.ts';
import { WAIT_TYPE, WaitForEventParamsSchema, WaitParamsSchema, waitDeadline, waitParamsProblem } from './wait-nodes.ts';

const issuesOf = (error: z.core.$ZodError): string => error.issues.map((i) => `${i.path.length > 0 ? `${i.path.join('.')}: ` : ''}${i.message}`).join('; ');

const invalid = (step: Advance, seq: number, message: string, recordNode: RecordNode): Promise<AdvanceOutcome> =>
  recordNode(step, { seq, result: { kind: 'failed', error: { code: 'PARAMS_INVALID', message }, durationMs: 0 } });

/**
 * A wait or wait-for-event node, in flight (`run.current`): the run pauses until its deadline, or until an
 * event answers it (its token is minted from the host's callback key; the wait keeps only its hash). A
 * deadline already past completes the node at once. Params that resolved to something invalid fail the
 * node, repairably, like a runner's PARAMS_INVALID.
 */
export const startWait = async (step: Advance, node: WorkflowNode, params: Record<string, unknown>, recordNode: RecordNode): Promise<AdvanceOutcome> => {
  const { run, deps } = step;
  const current = run.current;
  if (!current) throw new Error(`startWait: run ${run.runId} has no node in flight`);
  const now = deps.now();
  if (node.type === WAIT_TYPE) {
    const parsed = WaitParamsSchema.safeParse(params);
    if (!parsed.success) return invalid(step, current.seq, `wait '${node.id}': ${issuesOf(parsed.error)}`, recordNode);
    const problem = waitParamsProblem(parsed.data);
    if (problem) return invalid(step, current.seq, `wait '${node.id}': ${problem}`, recordNode);
    const until = waitDeadline(parsed.data, current.startedAt);
    if (until <= now) {
      const outputs = { waited_s: 0, until: new Date(until).toISOString(), woke_at: new Date(now).toISOString() };
      return recordNode(step, { seq: current.seq, result: { kind: 'ok', outputs, action: 'default', durationMs: 0 } });
    }
    return pauseRun(step, { kind: 'time', id: newWaitId(step), since: now, until, nodeId: node.id });
  }
  const parsed = WaitForEventParamsSchema.safeParse(params);
  if (!parsed.success) return invalid(step, current.seq, `wait-for-event '${node.id}': ${issuesOf(parsed.error)}`, recordNode);
  const key = step.callbacks?.key;
  if (!key) {
    return recordNode(step, {
      seq: current.seq,
      fatal: {
        node_id: node.id,
        category: 'non_repairable',
        code: 'CALLBACKS_NOT_CONFIGURED',
        message: `wait-for-event '${node.id}' needs a callback URL, and this host takes no callbacks: set FLOWMEND_CALLBACK_URL (locally, the URL of \`flowmend serve\`)`,
        fixable: false,
      },
    });
  }
  const token = mintCallbackToken(key, run.runId, node.id, current.visit);
  const timeoutS = parsed.data.timeout_s;
  return pauseRun(step, {
    kind: 'event',
    id: newWaitId(step),
    since: now,
    nodeId: node.id,
    tokenHash: hashCallbackToken(token),
    ...(timeoutS === undefined ? {} : { until: now + Math.round(timeoutS * 1000) }),
  });
};

/**
 * Pauses before a gated node runs (pflow's `approval: required`), showing the person its resolved params:
 * host configuration (`__`-keys) left out, cut to the viewer's bounds, secret-looking keys redacted.
 */
export const pauseForApproval = (step: Advance, node: WorkflowNode, params: Record<string, unknown>, iteration?: number): Promise<AdvanceOutcome> => {
  const shown = Object.fromEntries(Object.entries(params).filter(([key]) => !key.startsWith('__')));
  const preview = step.redactCallbacks(boundValue(shown)) as Record<string, unknown>;
  return pauseRun(step, {
    kind: 'approval',
    id: newWaitId(step),
    since: step.deps.now(),
    nodeId: node.id,
    nodeType: node.type,
    preview,
    ...(iteration !== undefined ? { iteration } : {}),
  });
};
