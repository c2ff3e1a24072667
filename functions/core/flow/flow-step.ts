import type { Advance, PrepareOptions } from '../advance.ts';
import { runnerWorstCaseS } from '../execution-limits.ts';
import type { WorkflowNode } from '../ir.ts';
import type { RunError, RunItem } from '../run-model.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import { resolveValue, type TemplateContext, TemplateResolutionError } from '../templates.ts';
import { newWaitId, pauseRun } from '../waits/pause.ts';
import type { Wait } from '../waits/wait-model.ts';
import { flowKey } from './flow-config.ts';
import { changeFlow, type FlowStore } from './flow-store.ts';
import { readRateWindow, reserveStart } from './rate-window.ts';
import { wakeGranted } from './release-slots.ts';
import { acquireSlot, readSlots, type SlotDecision } from './slots.ts';
import { singletonKey, supersede } from './start-control.ts';

/** What flow control runs with: the store of keys, and the times its leases are made of. */
export interface FlowDeps {
  store: FlowStore;
  /**
   * Added to a holder's worst case (its node's timeout with every retry): how long after a holder was last
   * heard of its slot is freed. It covers the engine's own steps around the node and their retries.
   */
  leaseMarginMs: number;
  /** How long a waiter a slot was handed to has to take it up (its wake-up's delivery). */
  grantMs: number;
  /** What the host's timer waits to: 1000 on AWS (a Wait state's timestamp is cut to the second), 1 locally. */
  timerQuantumMs: number;
}

export const DEFAULT_LEASE_MARGIN_MS = 30_000;
export const DEFAULT_GRANT_MS = 120_000;
/**
 * The longest start delay of a rate limit that the execution sits out in a Wait state (exact, no Lambda);
 * a longer one pauses the run `waiting` and a wake-up continues it at its start time.
 */
export const RATE_DELAY_IN_EXECUTION_MAX_MS = 240_000;

type Hold = NonNullable<RunItem['holds']>[number];

const unavailable = (nodeId: string): RunError => ({
  node_id: nodeId,
  category: 'non_repairable',
  code: 'FLOW_CONTROL_UNAVAILABLE',
  message: `node '${nodeId}' (or its workflow) has a concurrency or rate limit, and this host has no flow-control store`,
  fixable: false,
});

/** A key template resolved against the run's inputs and the outputs the node's templates read; a key is text. */
const resolveKey = (template: string, context: TemplateContext): string => {
  const value = resolveValue(template, context);
  return typeof value === 'string' ? value : JSON.stringify(value);
};

const keyFailure = (nodeId: string, what: string, error: TemplateResolutionError): RunError => ({
  node_id: nodeId,
  category: 'non_repairable',
  code: 'FLOW_KEY_UNRESOLVED',
  message: `the ${what} key of '${nodeId}' does not resolve: ${error.message}`,
  fixable: false,
});

interface SlotRequest {
  scope: 'run' | 'node';
  /** Which of the store's namespaces (flowKey): a run's limit, a node's, or the workflow's singleton. */
  kind: 'run' | 'node' | 'singleton';
  key: string;
  limit: number;
  holder: string;
  /** What a refused run does: waits its turn, or (a singleton) is skipped, or cancels the run that holds the key. */
  onBusy: 'wait' | 'skip' | 'cancel-running';
}

/** A singleton start that found its key held: the run ends cancelled (SINGLETON_SKIPPED) before any node ran. */
const skipRun = async (step: Advance, key: string, holder: string | undefined): Promise<AdvanceOutcome> => {
  const { run } = step;
  const message = `skipped: run ${holder ?? '(another)'} holds the singleton key '${key}'`;
  run.status = 'cancelled';
  run.lastError = { category: 'non_repairable', code: 'SINGLETON_SKIPPED', message, fixable: false };
  delete run.current;
  step.writes.event('run_cancelled', { message });
  await step.writes.commit();
  return { kind: 'done', runId: run.runId, owner: step.owner, exec: step.exec };
};

/**
 * Takes or renews one slot for the node about to run, until `leaseUntil`; when the run already holds it for
 * longer than `needUntil` nothing is written. Refused, the run pauses `waiting` for it (no execution and no
 * Lambda while it waits), until the soonest lease of a holder runs out, or until a holder hands it over.
 */
const takeSlot = async (
  step: Advance,
  flow: FlowDeps,
  node: WorkflowNode,
  request: SlotRequest,
  times: { needUntil: number; leaseUntil: number },
  options: PrepareOptions,
): Promise<AdvanceOutcome | undefined> => {
  const { run, deps } = step;
  const storeKey = flowKey(request.kind, request.key);
  const known = run.holds?.find((h) => h.key === storeKey && h.holder === request.holder);
  if (known && known.expiresAt !== null && known.expiresAt >= times.needUntil) return undefined;
  const now = deps.now();
  const waitId = newWaitId(step);
  const decision: SlotDecision = await changeFlow(flow.store, storeKey, (body) => {
    const made = acquireSlot(readSlots(body), {
      holder: { id: request.holder, runId: run.runId },
      limit: request.limit,
      now,
      leaseUntil: times.leaseUntil,
      waitId,
      grantMs: flow.grantMs,
      queue: request.onBusy !== 'skip',
    });
    return { body: made.slots, result: made };
  });
  await wakeGranted(deps.store, deps.wakeups, decision.promoted, now);
  if (decision.granted) {
    const hold: Hold = { key: storeKey, holder: request.holder, ...(request.scope === 'node' ? { nodeId: node.id } : {}), expiresAt: times.leaseUntil };
    run.holds = [...(run.holds ?? []).filter((h) => !(h.key === storeKey && h.holder === request.holder)), hold];
    return undefined;
  }
  const holder = decision.slots.holders.find((h) => h.runId !== run.runId)?.runId;
  if (request.onBusy === 'skip') return skipRun(step, request.key, holder);
  if (request.onBusy === 'cancel-running' && holder !== undefined) {
    // The running one is cancelled, which gives its slot to this run (queued just now), taken up here.
    await supersede(step, flow, holder, { code: 'SINGLETON_REPLACED', message: `replaced: run ${run.runId} started with the singleton key '${request.key}'` });
    return takeSlot(step, flow, node, { ...request, onBusy: 'wait' }, times, options);
  }
  run.metrics.flowWaits += 1;
  return pauseRun(step, {
    kind: 'slot',
    id: waitId,
    since: now,
    key: request.key,
    storeKey,
    scope: request.scope,
    nodeId: node.id,
    limit: request.limit,
    position: decision.position,
    holders: decision.holders,
    ...(decision.retryAt === undefined ? {} : { until: decision.retryAt }),
    ...(options.iteration === undefined ? {} : { iteration: options.iteration }),
    ...(options.retry
      ? { retry: { visit: options.retry.visit, attempt: options.retry.attempt, ...(options.retry.waitS ? { waitS: options.retry.waitS } : {}) } }
      : {}),
  });
};

/** Whether a node is under flow control of its own or of its workflow (a run that is not a child run's). */
export const underFlowControl = (step: Advance, node: WorkflowNode): boolean =>
  step.run.parent === undefined &&
  (step.ir.concurrency !== undefined || step.ir.singleton !== undefined || node.concurrency !== undefined || node.rate_limit !== undefined);

/**
 * What admitting a node decided: it runs (a rate-limited node at `startAt`, the start its window reserved,
 * which is its record's start; it waits for it when that is still ahead), or the run paused (or failed).
 */
export type Admission = { kind: 'run'; startAt?: number } | { kind: 'stop'; outcome: AdvanceOutcome };

/**
 * Before a node runs (Advance.prepare): the run's slot (the workflow's `concurrency`), the node's slot (its
 * `concurrency`), then its start time in its rate window (`rate_limit`): slots first, so that a run that
 * must wait for one reserves no start it would not use. Leases cover the node's worst case (every retry of
 * its timeout) and the margin: a holder that dies frees its slots when they run out.
 */
export const admitNode = async (
  step: Advance,
  node: WorkflowNode,
  context: TemplateContext,
  timeoutS: number,
  options: PrepareOptions,
  fitsExecution: (delayMs: number) => boolean,
): Promise<Admission> => {
  const { run, ir, deps } = step;
  const flow = deps.flow;
  if (!flow) return { kind: 'stop', outcome: await step.fail(unavailable(node.id)) };
  const now = deps.now();
  const needUntil = now + runnerWorstCaseS(timeoutS) * 1000 + (options.retry?.waitS ?? 0) * 1000;
  const times = { needUntil, leaseUntil: needUntil + flow.leaseMarginMs };
  const slots: SlotRequest[] = [];
  const single = singletonKey(step);
  if (single && 'error' in single) return { kind: 'stop', outcome: await step.fail({ ...single.error, node_id: node.id }) };
  if (single && ir.singleton) slots.push({ scope: 'run', kind: 'singleton', key: single.key, limit: 1, holder: run.runId, onBusy: ir.singleton.mode });
  try {
    if (ir.concurrency)
      slots.push({ scope: 'run', kind: 'run', key: resolveKey(ir.concurrency.key, context), limit: ir.concurrency.limit, holder: run.runId, onBusy: 'wait' });
    if (node.concurrency) {
      const key = resolveKey(node.concurrency.key, context);
      slots.push({ scope: 'node', kind: 'node', key, limit: node.concurrency.limit, holder: `${run.runId}#${node.id}`, onBusy: 'wait' });
    }
  } catch (error) {
    if (!(error instanceof TemplateResolutionError)) throw error;
    return { kind: 'stop', outcome: await step.fail(keyFailure(node.id, 'concurrency', error)) };
  }
  for (const request of slots) {
    const paused = await takeSlot(step, flow, node, request, times, options);
    if (paused) return { kind: 'stop', outcome: paused };
  }
  const limit = node.rate_limit;
  if (!limit) return { kind: 'run' };
  if (options.rateReservedAt !== undefined) return { kind: 'run', startAt: options.rateReservedAt };
  let key: string;
  try {
    key = resolveKey(limit.key, context);
  } catch (error) {
    if (!(error instanceof TemplateResolutionError)) throw error;
    return { kind: 'stop', outcome: await step.fail(keyFailure(node.id, 'rate limit', error)) };
  }
  // A retry's next try starts after its own wait: its start is reserved from then.
  const from = now + (options.retry?.waitS ?? 0) * 1000;
  const startAt = await changeFlow(flow.store, flowKey('rate', key), (body) => {
    const reserved = reserveStart(readRateWindow(body), { limit: limit.limit, periodMs: limit.period_s * 1000, now: from, quantumMs: flow.timerQuantumMs });
    return { body: reserved.window, result: reserved.startAt };
  });
  if (startAt <= now) return { kind: 'run', startAt };
  run.metrics.flowWaits += 1;
  run.metrics.flowWaitMs += startAt - now;
  if (startAt - now <= RATE_DELAY_IN_EXECUTION_MAX_MS && fitsExecution(startAt - now)) return { kind: 'run', startAt };
  const paused = await pauseRun(step, {
    kind: 'rate',
    id: newWaitId(step),
    since: now,
    key,
    nodeId: node.id,
    until: startAt,
    ...(options.iteration === undefined ? {} : { iteration: options.iteration }),
  });
  return { kind: 'stop', outcome: paused };
};

/**
 * A wait of flow control that was granted or came due: the node it paused before is prepared again (its slot
 * taken, or its reserved start kept); a debounced run starts (`startAnew`, the engine's start, past the debounce).
 */
export const continueFlowWait = (
  step: Advance,
  wait: Extract<Wait, { kind: 'slot' | 'rate' | 'debounce' }>,
  startAnew: (step: Advance) => Promise<AdvanceOutcome>,
): Promise<AdvanceOutcome> => {
  const now = step.deps.now();
  // A rate limit's wait was counted when its start was reserved; a slot's and a debounce's now that they are over.
  if (wait.kind !== 'rate') step.run.metrics.flowWaitMs += Math.max(0, now - wait.since);
  if (wait.kind === 'debounce') return startAnew(step);
  const iteration = wait.iteration === undefined ? {} : { iteration: wait.iteration };
  if (wait.kind === 'rate') return step.prepare(wait.nodeId, { ...iteration, rateReservedAt: wait.until });
  const retry = wait.retry ? { retry: { visit: wait.retry.visit, attempt: wait.retry.attempt, waitS: wait.retry.waitS } } : {};
  return step.prepare(wait.nodeId ?? '', { ...iteration, ...retry });
};
