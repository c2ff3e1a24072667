// A CLI command ends without closing SQLite (bin/cli-main.ts): its WAL stays in the state dir for the next
// command, which reads every commit from it, and SQLite's own checkpoint keeps it to about
// WAL_AUTOCHECKPOINT_PAGES. The real bin, each command a process of its own.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DATABASE_FILE, WAL_AUTOCHECKPOINT_PAGES } from '../../../functions/adapters/sqlite-database.ts';
import { killStrayChildren, makeTempDir, parseJsonOutput, runCli, writeWorkflow } from '../../support/cli-process.ts';

const dir = makeTempDir('store-at-exit');

afterEach(() => killStrayChildren());

/** n transform nodes, each passing on the one before's result. */
const chain = (n: number) => ({
  nodes: Array.from({ length: n }, (_, i) => ({
    id: `n${i}`,
    type: 'transform' as const,
    params: { expression: '$ + 1', input: i === 0 ? 0 : `\${n${i - 1}.result}` },
  })),
  edges: Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
});

/** Pages in the WAL file (its 32-byte header, then a 24-byte header before each 4 KB page). */
const walPages = (stateDir: string): number => (statSync(join(stateDir, `${DATABASE_FILE}-wal`)).size - 32) / (24 + 4096);

/** The database with its WAL, read as any other process reads it: whole, and what it holds of the runs. */
const inspect = (stateDir: string): { integrity: unknown; runs: number; steps: number } => {
  const db = new Database(join(stateDir, DATABASE_FILE), { readonly: true });
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    return { integrity: db.pragma('integrity_check', { simple: true }), runs: count('runs'), steps: count('steps') };
  } finally {
    db.close();
  }
};

describe('the local store when a CLI command ends', () => {
  it('leaves the WAL for the next command, which reads every commit from it', async () => {
    const stateDir = join(dir, 'left');
    const workflow = writeWorkflow(dir, 'three', chain(3));
    const ran = parseJsonOutput<{ run_id: string; success: boolean }>(await runCli(['run', workflow, '--output-format', 'json'], { stateDir }));
    expect(ran.success).toBe(true);
    // The run's commits are in the WAL, which a close would have folded into the database and deleted.
    expect(walPages(stateDir)).toBeGreaterThan(0);
    const status = parseJsonOutput<{ status: string; result: Record<string, unknown>; steps: unknown[] }>(
      await runCli(['status', ran.run_id, '--output-format', 'json'], { stateDir }),
    );
    expect(status).toMatchObject({ status: 'succeeded', result: { result: 3 } });
    expect(status.steps).toHaveLength(3);
    expect(inspect(stateDir)).toEqual({ integrity: 'ok', runs: 1, steps: 3 });
  });

  it('keeps the WAL to about WAL_AUTOCHECKPOINT_PAGES, folding it into the database as commands commit', async () => {
    const stateDir = join(dir, 'bounded');
    const workflow = writeWorkflow(dir, 'hundred', chain(100));
    // Three runs of 100 commits write ~900 pages: SQLite's default (1,000 pages, 4 MB) would have kept them all.
    for (let i = 0; i < 3; i += 1) expect((await runCli(['run', workflow, '--output-format', 'json'], { stateDir })).code).toBe(0);
    expect(walPages(stateDir)).toBeGreaterThan(0);
    expect(walPages(stateDir)).toBeLessThan(2 * WAL_AUTOCHECKPOINT_PAGES);
    expect(inspect(stateDir)).toEqual({ integrity: 'ok', runs: 3, steps: 300 });
  });
});
