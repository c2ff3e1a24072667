import type { RunLauncher } from '../../core/index.ts';
import { InvalidInputError, RunIdSchema } from '../../core/index.ts';
import * as z from '../../core/zod.ts';

/** What a wake-up schedule sends (adapters/scheduler-wakeups.ts `wakeInput`). */
export const WakeEventSchema = z.object({
  runId: RunIdSchema,
  waitId: z.string().check(z.minLength(1), z.maxLength(64)),
  mode: z._default(z.enum(['express', 'standard']), 'express'),
});

/**
 * The target of every wake-up schedule (DESIGN 7b): starts an execution whose first step claims the run
 * (core's claimWake decides whether the wait is due, answered, over or cancelled). It reads and writes
 * nothing itself, so a wake-up delivered twice costs one more execution that ends idle, and no more.
 */
export const makeWakeHandler =
  (deps: { launcher: Pick<RunLauncher, 'newOwner' | 'launch'>; now: () => number }) =>
  async (event: unknown): Promise<{ runId: string; waitId: string; owner: string }> => {
    const parsed = WakeEventSchema.safeParse(event);
    if (!parsed.success)
      throw new InvalidInputError(`Bad wake-up: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'event'}: ${i.message}`).join('; ')}`);
    const { runId, waitId, mode } = parsed.data;
    const owner = deps.launcher.newOwner(runId, deps.now());
    await deps.launcher.launch({ runId, owner, mode, waitId });
    return { runId, waitId, owner: owner.id };
  };

let awsHandler: ((event: unknown) => Promise<{ runId: string; waitId: string; owner: string }>) | undefined;

/** Lambda entry, invoked by EventBridge Scheduler with a wake-up. */
export const handler = async (event: unknown): Promise<{ runId: string; waitId: string; owner: string }> => {
  if (!awsHandler) {
    const { wakeDepsFromEnv } = await import('./wake-deps.ts');
    awsHandler = makeWakeHandler(wakeDepsFromEnv());
  }
  const woken = await awsHandler(event);
  console.log(JSON.stringify({ level: 'INFO', message: 'wake-up: execution started', ...woken }));
  return woken;
};
