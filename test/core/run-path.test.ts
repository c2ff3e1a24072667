import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clearPath, forgetPathChanges, pathReadAt, setLatest, setVisits, sharePathChanges, takePathChanges } from '../../functions/core/run-path.ts';
import { aRun } from '../support/builders.ts';

const FUNCTIONS = fileURLToPath(new URL('../../functions', import.meta.url));

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

describe('run-path: the changes of a run item path maps', () => {
  it('are taken since the last take of the object; unknown (whole) at first and after a failed write', () => {
    const run = aRun({ runId: 'tracked' });
    setLatest(run, 'x', 1);
    expect(takePathChanges(run, 'a')).toBeUndefined();
    setLatest(run, 'y', 2);
    setVisits(run, 'y', 1);
    setVisits(run, 'x', 2);
    expect(takePathChanges(run, 'b')).toEqual({ base: 'a', changed: ['y', 'x'] });
    expect(takePathChanges(run, 'c')).toEqual({ base: 'b', changed: [] });
    forgetPathChanges(run);
    expect(takePathChanges(run, 'd')).toBeUndefined();
    // A copy written in its place (a redacted one) shares them.
    setLatest(run, 'z', 3);
    const copy = { ...run };
    sharePathChanges(run, copy);
    expect(takePathChanges(copy, 'e')).toEqual({ base: 'd', changed: ['z'] });
    setLatest(run, 'z', 4);
    expect(takePathChanges({ ...run }, 'f')).toBeUndefined();
  });

  it('after clearPath (a walk), are the entries that differ from the maps it emptied, and those changed before it', () => {
    const run = aRun({ runId: 'walked' });
    for (const [id, seq] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
      ['d', 4],
    ] as const) {
      setLatest(run, id, seq);
      setVisits(run, id, 1);
    }
    takePathChanges(run, 'w1');
    setLatest(run, 'd', 5); // before the walk: its row still says 4
    clearPath(run);
    expect(run.latest).toEqual({});
    // The walk replays a, b as they were, c at another visit, and stops before d.
    setLatest(run, 'a', 1);
    setVisits(run, 'a', 1);
    setLatest(run, 'b', 2);
    setVisits(run, 'b', 1);
    setLatest(run, 'c', 3);
    setVisits(run, 'c', 2);
    expect(takePathChanges(run, 'w2')?.changed.sort()).toEqual(['c', 'd']);
    // Two walks before a write: the rows are still those of the write before the first.
    clearPath(run);
    setLatest(run, 'a', 1);
    setVisits(run, 'a', 1);
    clearPath(run);
    setLatest(run, 'b', 2);
    setVisits(run, 'b', 1);
    expect(takePathChanges(run, 'w3')?.changed.sort()).toEqual(['a', 'c']);
    // Changes unknown before the walk (a failed write): whole, walk or not.
    forgetPathChanges(run);
    clearPath(run);
    expect(takePathChanges(run, 'w4')).toBeUndefined();
    // Never written from this object: whole.
    const fresh = aRun({ runId: 'fresh' });
    clearPath(fresh);
    expect(takePathChanges(fresh, 'x1')).toBeUndefined();
  });

  it('of an item read from the rows of a write go over those rows', () => {
    const run = aRun({ runId: 'read' });
    pathReadAt(run, 'stored');
    setLatest(run, 'n', 7);
    expect(takePathChanges(run, 'next')).toEqual({ base: 'stored', changed: ['n'] });
  });

  it('are made only through its functions: no other code assigns to an entry of latest or visits', () => {
    // A change made around them would be left out of the next partial write (the SQLite store's rows).
    const assignment =
      /(latest|visits)\[[^\]]*\] *(=[^=]|\+\+|\+=|-=)|\.(latest|visits) *=[^=>]|delete [\w.]*\.(latest|visits)\b|Object\.assign\([\w.]*\.(latest|visits)/;
    const offending = sources(FUNCTIONS)
      .filter((path) => !path.endsWith('run-path.ts'))
      .flatMap((path) =>
        readFileSync(path, 'utf8')
          .split('\n')
          .flatMap((line, i) => (assignment.test(line) ? [`${relative(FUNCTIONS, path)}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(offending).toEqual([]);
  });
});
