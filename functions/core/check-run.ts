import { interruptedRecord, NOT_STARTED_BY_CANCEL, replaceInterruptedRecord } from './cancel-run.ts';
import type { EngineDeps } from './engine-deps.ts';
import { InvalidInputError, RunNotFoundError, StaleRunError } from './errors.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { RunIdSchema } from './run-model.ts';
import type { AdvanceOutcome } from './state-io.ts';
import * as z from './zod.ts';

/** What the CheckRun state sends the engine after a Wait: the run, its owner, and the try's step. */
export const CheckInputSchema = builtOnFirstUse(() =>
  z.object({ kind: z.literal('check'), runId: RunIdSchema, owner: z.string(), seq: z.int().check(z.positive()) }),
);
export type CheckInput = z.infer<typeof CheckInputSchema>;

/** The try may start (the CheckRoute state then goes on to its runner); else the execution ends as the outcome says. */
export type CheckOutcome = { kind: 'go'; runId: string; owner: string } | Extract<AdvanceOutcome, { kind: 'failed' }>;

/** Whether an event for the engine Lambda is the check after a Wait rather than an Advance input. */
export const isCheckInput = (event: unknown): boolean => event !== null && typeof event === 'object' && (event as { kind?: unknown }).kind === 'check';

/**
 * After a Wait state (a retry's wait, a rate limit's start), before the runner: whether the run still
 * wants this try. A cancel during the wait dropped the run's owner; the try is then recorded as never
 * started and the execution ends with the cancel's error, so no side effect happens after a cancel (on
 * AWS an Express execution cannot be stopped, and locally another process's cancel reaches no Wait). Reads
 * the store, never the cache: the cancel may come from another process. A run taken over stops this execution.
 */
export const checkBeforeTry = async (event: unknown, deps: EngineDeps): Promise<CheckOutcome> => {
  const parsed = CheckInputSchema.safeParse(event);
  if (!parsed.success) throw new InvalidInputError(`CheckRun got an input it cannot read: ${parsed.error.message}`);
  const { runId, owner, seq } = parsed.data;
  const run = await deps.store.getRun(runId);
  if (!run) throw new RunNotFoundError(`run ${runId} does not exist`);
  const current = run.current;
  if (run.owner?.id === owner && current?.seq === seq) return { kind: 'go', runId, owner };
  if (run.status !== 'cancelled' || run.owner !== undefined || current?.seq !== seq) {
    throw new StaleRunError(
      `run ${runId} is now owned by ${run.owner?.id ?? 'nobody'} (in flight: ${current?.seq ?? 'none'}), not ${owner} at step ${seq}; this execution stops`,
    );
  }
  const try_ = current.attempt === undefined ? '' : ` (try ${current.attempt})`;
  await replaceInterruptedRecord(deps.store, {
    ...interruptedRecord(run, current, deps.now()),
    error: { code: NOT_STARTED_BY_CANCEL, message: `'${current.nodeId}'${try_} had not started when the cancel came: it did not run` },
  });
  const error = run.lastError ?? { category: 'non_repairable', code: 'CANCELLED', message: 'the run was cancelled by request', fixable: false };
  return { kind: 'failed', runId, owner, error };
};
