import { describe, expect, it } from 'vitest';
import { cryptoIds } from '../../functions/core/index.ts';

describe('cryptoIds', () => {
  it('gives lowercase hex of the asked length, across pool refills, never the same twice', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5000; i += 1) {
      const id = cryptoIds.hex(6);
      expect(id).toMatch(/^[0-9a-f]{12}$/);
      seen.add(id);
    }
    expect(seen.size).toBe(5000);
    expect(cryptoIds.hex(16)).toMatch(/^[0-9a-f]{32}$/);
    expect(cryptoIds.hex(5000)).toMatch(/^[0-9a-f]{10000}$/);
  });
});
