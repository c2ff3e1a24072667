import type { AdvanceOutcome, ItemRecorded } from '../../core/index.ts';
import { advanceRun, type EngineDeps, isItemResult, recordBatchItem } from '../../core/index.ts';
import { settleTelemetry } from './telemetry-settle.ts';

/** The Advance state: one engine step; and the RecordItem state inside a batch's Map: one item's record. */
export const makeAdvanceHandler =
  (deps: EngineDeps) =>
  async (event: unknown): Promise<AdvanceOutcome | ItemRecorded> =>
    isItemResult(event) ? recordBatchItem(event, deps) : advanceRun(event, deps);

let awsHandler: ((event: unknown) => Promise<AdvanceOutcome | ItemRecorded>) | undefined;

/** Lambda entry: AWS clients are built on the first call of a cold start, not at import. */
export const handler = async (event: unknown): Promise<AdvanceOutcome | ItemRecorded> => {
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
