import type { RunItem } from '../run-model.ts';

/**
 * The workflow version the next repair or patch writes: after the run's own and after any it did not adopt
 * (a repair held for approval, or rejected), which stay in the store as they were proposed.
 */
export const nextIrVersion = (run: RunItem): number => Math.max(run.irVersion, ...run.repairs.map((r) => r.version ?? 0)) + 1;
