// The engine cache's listing of a run's records (EngineCache.rememberListing / takeListing): what a resume's patch
// check listed before its claim, for the walk that follows, and never for a later step of the run.
import { describe, expect, it } from 'vitest';
import { EngineCache } from '../../functions/core/engine-cache.ts';
import type { NodeRecord } from '../../functions/core/run-model.ts';

const record = (seq: number): NodeRecord =>
  ({
    runId: 'r1',
    seq,
    nodeId: `n${seq}`,
    nodeType: 'transform',
    visit: 1,
    status: 'completed',
    cacheKey: 'k',
    sideEffects: false,
    irVersion: 0,
  }) as NodeRecord;

describe("the engine cache's record listings", () => {
  it('gives a listing once, at the rev it was listed at', () => {
    const cache = new EngineCache();
    const listed = [record(1), record(2)];
    cache.rememberListing('r1', 'rev-a', listed);
    expect(cache.takeListing('r1', 'rev-a')).toBe(listed);
    expect(cache.takeListing('r1', 'rev-a')).toBeUndefined();
  });

  it('gives none at another rev, or without one, and forgets it then', () => {
    const cache = new EngineCache();
    cache.rememberListing('r1', 'rev-a', [record(1)]);
    expect(cache.takeListing('r1', 'rev-b')).toBeUndefined();
    expect(cache.takeListing('r1', 'rev-a')).toBeUndefined();
    cache.rememberListing('r1', 'rev-a', [record(1)]);
    expect(cache.takeListing('r1', undefined)).toBeUndefined();
    expect(cache.takeListing('r1', 'rev-a')).toBeUndefined();
  });

  it("forgets a run's listing when a launch brings none, and keeps a listing per run", () => {
    const cache = new EngineCache({ runs: 2 });
    cache.rememberListing('r1', 'rev-a', [record(1)]);
    cache.rememberListing('r1', 'rev-a', undefined);
    expect(cache.takeListing('r1', 'rev-a')).toBeUndefined();
    cache.rememberListing('r1', 'rev-a', [record(1)]);
    cache.rememberListing('r2', 'rev-b', [record(2)]);
    expect(cache.takeListing('r2', 'rev-b')).toHaveLength(1);
    expect(cache.takeListing('r1', 'rev-a')).toHaveLength(1);
    cache.rememberListing('r1', 'rev-a', [record(1)]);
    cache.clear();
    expect(cache.takeListing('r1', 'rev-a')).toBeUndefined();
  });
});
