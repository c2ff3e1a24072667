import type { Advance } from '../advance.ts';
import { cancelRun } from '../cancel-run.ts';
import { RunBusyError, RunNotFoundError } from '../errors.ts';
import type { RunError } from '../run-model.ts';
import type { AdvanceOutcome } from '../state-io.ts';
import { resolveValue, TemplateResolutionError } from '../templates.ts';
import { newWaitId, pauseRun } from '../waits/pause.ts';
import * as z from '../zod.ts';
import { flowKey } from './flow-config.ts';
import type { FlowDeps } from './flow-step.ts';
import { changeFlow, type FlowStore } from './flow-store.ts';

/** A key's pending debounced start: the run that goes when `until` comes, and how many starts it stands for. */
const PendingSchema = z.object({ runId: z.string(), until: z.number(), starts: z.int() });

const keyOf = (step: Advance, template: string): string => {
  const value = resolveValue(template, { inputs: step.run.params, nodes: {}, failed: new Set() });
  return typeof value === 'string' ? value : JSON.stringify(value);
};

const unresolved = (what: string, error: TemplateResolutionError): RunError => ({
  category: 'non_repairable',
  code: 'FLOW_KEY_UNRESOLVED',
  message: `the workflow's ${what} key does not resolve: ${error.message}`,
  fixable: false,
});

/** Ends a run that a later start superseded, or that a newer singleton run replaces: cancelled, saying why; one that already ended is left as it is. */
export const supersede = async (step: Advance, flow: FlowDeps, runId: string, reason: { code: string; message: string }): Promise<void> => {
  try {
    await cancelRun(step.deps.store, runId, step.deps.now(), { store: flow.store, grantMs: flow.grantMs, wakeups: step.deps.wakeups, reason });
  } catch (error) {
    if (!(error instanceof RunBusyError) && !(error instanceof RunNotFoundError)) throw error;
  }
};

/**
 * A debounced start (the workflow's `debounce`), at the first step of a new run: the run waits out the
 * period (no execution while it waits), and a start of the same key before it is over takes its place,
 * cancelling it (`DEBOUNCED`) and waiting a whole period of its own. So of a burst of starts the last one
 * runs, with its own params, a period after the burst. Returns undefined when the run goes on now.
 */
export const debounceStart = async (step: Advance): Promise<AdvanceOutcome | undefined> => {
  const { run, ir, deps } = step;
  const debounce = ir.debounce;
  if (!debounce || run.parent !== undefined) return undefined;
  const flow = deps.flow;
  if (!flow)
    return step.fail({
      category: 'non_repairable',
      code: 'FLOW_CONTROL_UNAVAILABLE',
      message: 'the workflow is debounced, and this host has no flow-control store',
      fixable: false,
    });
  let key: string;
  try {
    key = keyOf(step, debounce.key);
  } catch (error) {
    if (!(error instanceof TemplateResolutionError)) throw error;
    return step.fail(unresolved('debounce', error));
  }
  const now = deps.now();
  const until = now + Math.round(debounce.period_s * 1000);
  const { superseded, starts } = await changeFlow(flow.store, flowKey('debounce', key), (body) => {
    const pending = PendingSchema.safeParse(body);
    const open = pending.success && pending.data.runId !== run.runId && pending.data.until > now ? pending.data : undefined;
    const count = (open?.starts ?? 0) + 1;
    return { body: { runId: run.runId, until, starts: count }, result: { superseded: open?.runId, starts: count } };
  });
  if (superseded) {
    await supersede(step, flow, superseded, { code: 'DEBOUNCED', message: `debounced: a later start of '${key}' (run ${run.runId}) runs instead` });
  }
  run.metrics.flowWaits += 1;
  return pauseRun(step, { kind: 'debounce', id: newWaitId(step), since: now, key, until, starts });
};

/** The run a singleton key's slot holder is, read from the key's slots. */
export const singletonHolder = async (store: FlowStore, storeKey: string): Promise<string | undefined> => {
  const doc = await store.getFlow(storeKey);
  const parsed = z.object({ holders: z.array(z.object({ runId: z.string() })) }).safeParse(doc?.body);
  return parsed.success ? parsed.data.holders[0]?.runId : undefined;
};

/** The singleton key of a run (the workflow's `singleton`), or a failure of its template. */
export const singletonKey = (step: Advance): { key: string } | { error: RunError } | undefined => {
  const singleton = step.ir.singleton;
  if (!singleton || step.run.parent !== undefined) return undefined;
  try {
    return { key: keyOf(step, singleton.key) };
  } catch (error) {
    if (!(error instanceof TemplateResolutionError)) throw error;
    return { error: unresolved('singleton', error) };
  }
};
