import type { WakeRequest } from '../../core/index.ts';
import type { LocalRunLauncher } from './local-launcher.ts';

/**
 * A wake-up due now (a concurrency slot handed to a waiting run) starts its execution in this process at
 * once; one due later is left to `serve`'s tick, which reads due waits from the store. The execution's first
 * step claims the run, so a tick that launches the same wait too ends idle.
 */
export const launchWake = async (launcher: Pick<LocalRunLauncher, 'launch' | 'newOwner'> | undefined, request: WakeRequest): Promise<void> => {
  if (!launcher) return;
  await launcher.launch({ runId: request.runId, owner: launcher.newOwner(request.runId, request.at), mode: request.mode, waitId: request.waitId });
};

/** FLOWMEND_FLOW_LEASE_MARGIN_S: how long after a holder of a concurrency slot was last heard of its slot is freed, past its node's worst case. */
export const flowLeaseFrom = (env: Readonly<Record<string, string | undefined>>): { leaseMarginMs?: number } => {
  const margin = env.FLOWMEND_FLOW_LEASE_MARGIN_S;
  return margin !== undefined && /^\d+$/.test(margin) ? { leaseMarginMs: Number(margin) * 1000 } : {};
};
