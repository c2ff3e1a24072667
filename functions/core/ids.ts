import { randomBytes } from 'node:crypto';

/**
 * Where the engine and the hosts get randomness (run ids, owner ids, the run item's `rev`), injected
 * like the clock so that a test can make it predictable. Hosts use `cryptoIds` unless told otherwise.
 */
export interface Ids {
  /** `bytes` random bytes as lowercase hex (2 characters a byte). */
  hex(bytes: number): string;
}

/**
 * Random bytes drawn from the system a page at a time: one `randomBytes` call costs a trip into OpenSSL
 * (measured 5-35 us here), and the engine takes 6 bytes every step (the run's `rev`). The pool never
 * hands out the same bytes twice.
 */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let taken = 0;

export const cryptoIds: Ids = {
  hex: (bytes) => {
    if (bytes > POOL_BYTES) return randomBytes(bytes).toString('hex');
    if (taken + bytes > pool.length) {
      pool = randomBytes(POOL_BYTES);
      taken = 0;
    }
    const hex = pool.toString('hex', taken, taken + bytes);
    taken += bytes;
    return hex;
  },
};

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
