import { hash } from 'node:crypto';

/**
 * The span id of one node visit: derived from the run and the visit, so that the runner (which sends it
 * on as the parent of an http node's request) and whoever later records the visit's span agree on it
 * without storing it. A module of its own, without zod: the OpenTelemetry side file of the Lambdas uses it.
 */
export const visitSpanId = (runId: string, seq: number): string => {
  const id = hash('sha256', `${runId}/${seq}`, 'hex').slice(0, 16);
  // An all-zero id is invalid in W3C Trace Context (one in 2^64).
  return /^0+$/.test(id) ? '0000000000000001' : id;
};
