import type { ClassificationRules } from './ir.ts';

export type HttpStatusClass = 'success' | 'warning' | 'repairable' | 'transient';

/** Resource, auth, permission, gone and rate limit: no change to the workflow fixes them. */
export const WARNING_STATUS_CODES: readonly number[] = [401, 403, 404, 410, 429];
/** Bad requests: the workflow sent something wrong. Any other 4xx is repairable too. */
export const REPAIRABLE_STATUS_CODES: readonly number[] = [400, 405, 409, 413, 415, 422];
/** 408 Request Timeout is a timeout like any other; 5xx are the server's trouble. */
export const TRANSIENT_STATUS_CODES: readonly number[] = [408];

/**
 * The class of an HTTP status (DESIGN section 5). The workflow's rules win over the defaults,
 * in the order transient, warning, repairable; they may also mark a 2xx as a failure.
 */
export const classifyHttpStatus = (status: number, rules?: ClassificationRules): HttpStatusClass => {
  if (rules?.transient_status_codes?.includes(status)) return 'transient';
  if (rules?.warning_status_codes?.includes(status)) return 'warning';
  if (rules?.repairable_status_codes?.includes(status)) return 'repairable';
  if (status >= 200 && status < 300) return 'success';
  if (status >= 500 || TRANSIENT_STATUS_CODES.includes(status)) return 'transient';
  if (WARNING_STATUS_CODES.includes(status)) return 'warning';
  return 'repairable';
};
