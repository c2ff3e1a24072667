import { advanceRun, type EngineDeps } from '../../core/index.ts';
import type { AdvanceOutcome } from '../../core/index.ts';

/** The Advance state: one engine step. */
export const makeAdvanceHandler = (deps: EngineDeps) => async (event: unknown): Promise<AdvanceOutcome> => advanceRun(event, deps);

let awsHandler: ((event: unknown) => Promise<AdvanceOutcome>) | undefined;

/** Lambda entry: AWS clients are built on the first call of a cold start, not at import. */
export const handler = async (event: unknown): Promise<AdvanceOutcome> => {
  if (!awsHandler) {
    const { engineDepsFromEnv } = await import('./aws-deps.ts');
    awsHandler = makeAdvanceHandler(await engineDepsFromEnv());
  }
  return awsHandler(event);
};
