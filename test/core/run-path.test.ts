import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { clearPath, forgetPathChanges, setLatest, setVisits, sharePathChanges, takePathChanges } from '../../functions/core/run-path.ts';
import { aRun } from '../support/builders.ts';

const FUNCTIONS = fileURLToPath(new URL('../../functions', import.meta.url));

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });

describe('run-path: the changes of a run item path maps', () => {
  it('are taken since the last take of the object; unknown (whole) at first, after clearPath and after a failed write', () => {
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
    clearPath(run);
    expect(run.latest).toEqual({});
    expect(takePathChanges(run, 'e')).toBeUndefined();
    // A copy written in its place (a redacted one) shares them.
    setLatest(run, 'z', 3);
    const copy = { ...run };
    sharePathChanges(run, copy);
    expect(takePathChanges(copy, 'f')).toEqual({ base: 'e', changed: ['z'] });
    setLatest(run, 'z', 4);
    expect(takePathChanges({ ...run }, 'g')).toBeUndefined();
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
