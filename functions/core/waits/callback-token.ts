import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * A callback token: an HMAC-SHA256 of the run, the wait-for-event node and its visit under the host's
 * callback key, as base64url (43 characters). Derived, not drawn, so that an earlier node's params can
 * carry it and a replay computes the same cache key; the store keeps only its SHA-256 (the wait's
 * `tokenHash`), so neither the store nor a report can give one away. The key stays with the engine.
 */
export const CALLBACK_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The host's secret key (at least 32 bytes) and the API's base URL, e.g. `http://127.0.0.1:8787` or the stack's API stage URL. */
export interface CallbackConfig {
  key: Uint8Array;
  baseUrl: string;
}

/** Where the engine gets its callback config (read once per process: a file, a secret); a host without one has no callbacks. */
export interface CallbackSource {
  load(): Promise<CallbackConfig>;
}

export const mintCallbackToken = (key: Uint8Array, runId: string, nodeId: string, visit: number): string =>
  createHmac('sha256', key).update(`flowmend-callback\0${runId}\0${nodeId}\0${visit}`).digest('base64url');

export const hashCallbackToken = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Whether `token` is the one whose hash a wait holds; constant time, so a caller learns nothing from how long a refusal took. */
export const callbackTokenMatches = (token: string, tokenHash: string): boolean => {
  if (!CALLBACK_TOKEN_PATTERN.test(token) || !/^[0-9a-f]{64}$/.test(tokenHash)) return false;
  return timingSafeEqual(Buffer.from(hashCallbackToken(token), 'hex'), Buffer.from(tokenHash, 'hex'));
};

/** The URL a third party POSTs the event to: the run id says which run item to read, the token is the credential. */
export const callbackUrl = (baseUrl: string, runId: string, token: string): string => `${baseUrl.replace(/\/+$/, '')}/callbacks/${runId}/${token}`;
