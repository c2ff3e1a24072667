import { randomBytes } from 'node:crypto';

/**
 * Where the engine and the hosts get randomness (run ids, owner ids, the run item's `rev`), injected
 * like the clock so that a test can make it predictable. Hosts use `cryptoIds` unless told otherwise.
 */
export interface Ids {
  /** `bytes` random bytes as lowercase hex (2 characters a byte). */
  hex(bytes: number): string;
}

export const cryptoIds: Ids = { hex: (bytes) => randomBytes(bytes).toString('hex') };

/** Ids that count up (`000001`, `000002`, ...): for tests that compare ids. */
export const sequentialIds = (): Ids => {
  let next = 0;
  return {
    hex: (bytes) =>
      (++next)
        .toString(16)
        .padStart(bytes * 2, '0')
        .slice(-bytes * 2),
  };
};
