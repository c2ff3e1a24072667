import type { AdvanceOutcome, CheckOutcome, ItemRecorded } from '../../core/index.ts';
import { advanceRun, checkBeforeTry, type EngineDeps, isCheckInput, isItemResult, recordBatchItem } from '../../core/index.ts';
import { settleTelemetry } from './telemetry-settle.ts';

type EngineResult = AdvanceOutcome | ItemRecorded | CheckOutcome;

/**
 * The Advance state: one engine step; the RecordItem state inside a batch's Map: one item's record; the
 * CheckRun state after a Wait: whether the try may still start.
 */
export const makeAdvanceHandler =
  (deps: EngineDeps) =>
  async (event: unknown): Promise<EngineResult> =>
    isItemResult(event) ? recordBatchItem(event, deps) : isCheckInput(event) ? checkBeforeTry(event, deps) : advanceRun(event, deps);

let awsHandler: ((event: unknown) => Promise<EngineResult>) | undefined;

/** Lambda entry: AWS clients are built on the first call of a cold start, not at import. */
export const handler = async (event: unknown): Promise<EngineResult> => {
  if (!awsHandler) {
    const { engineDepsFromEnv } = await import('./aws-deps.ts');
    awsHandler = makeAdvanceHandler(await engineDepsFromEnv());
  }
  try {
    return await awsHandler(event);
  } finally {
    await settleTelemetry();
  }
};
