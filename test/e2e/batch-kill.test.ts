import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import { countLines, killStrayChildren, makeTempDir, parseJsonOutput, runCli, spawnCli, writeWorkflow } from '../support/cli-process.ts';

const root = makeTempDir('batch-kill');
const stateDir = join(root, 'state');
afterAll(() => killStrayChildren());

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until a file has `lines` lines (items started), polling; bounded. */
const waitForLines = async (path: string, lines: number, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs;
  while (countLines(path) < lines) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lines} lines in ${path}`);
    await pause(10);
  }
};

const runsByIndex = (path: string): number[] => {
  const runs = new Array<number>(50).fill(0);
  for (const line of readFileSync(path, 'utf8').split('\n').filter(Boolean)) runs[Number(line)] = (runs[Number(line)] ?? 0) + 1;
  return runs;
};

describe('a parallel batch killed with SIGKILL mid-way', () => {
  it('resumed: every item ran exactly once, except those in flight at the kill (at most max_concurrent), which ran again', async () => {
    const side = join(root, 'side');
    const wf = writeWorkflow(root, 'fifty', {
      nodes: [
        {
          id: 'each',
          type: 'shell',
          params: { command: `echo \${__index__} >> ${side}; sleep 0.02; printf '%s' \${item}` },
          batch: { items: Array.from({ length: 50 }, (_, i) => `n${i}`), parallel: true, max_concurrent: 5 },
        },
      ],
      outputs: { last: { source: '${each.results[49].stdout}' }, ok: { source: '${each.success_count}' } },
    });
    const first = spawnCli(['run', wf], { stateDir });
    await waitForLines(side, 20);
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');

    // Which items the store holds as done at the kill: those must never run again.
    const store = SqliteRunStore.open(stateDir);
    const [run] = await store.listRuns({ limit: 5, workflowName: 'fifty' });
    const recorded = (await store.listRecords(run?.runId as string)).filter((r) => r.item && r.status === 'completed').map((r) => r.item?.index as number);
    store.close();
    await pause(100); // shells of items in flight finish their `echo` (their parent is gone)
    const before = runsByIndex(side);
    expect(recorded.length).toBeGreaterThan(0);
    expect(recorded.length).toBeLessThan(50);

    const resumed = await runCli(['resume', run?.runId as string, '--output-format', 'json'], { stateDir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(parseJsonOutput<RunReport>(resumed)).toMatchObject({ success: true, result: { last: 'n49', ok: 50 } });
    const after = runsByIndex(side);
    for (const index of recorded) expect(after[index], `item ${index} was recorded before the kill`).toBe(1);
    const twice = after.map((n, i) => (n === 2 ? i : -1)).filter((i) => i >= 0);
    expect(after.every((n) => n === 1 || n === 2)).toBe(true);
    // Ran twice: only items that had started before the kill but were not recorded (in flight).
    expect(twice.length).toBeLessThanOrEqual(5);
    for (const index of twice) {
      expect(before[index]).toBe(1);
      expect(recorded).not.toContain(index);
    }
  });

  it('prints the batch progress as pflow does (`each... 2/4`, failed items counted) and the batch line at its end', async () => {
    const wf = writeWorkflow(root, 'progress', {
      nodes: [{ id: 'each', type: 'shell', params: { command: 'test ${item} != 3' }, batch: { items: [1, 2, 3, 4], error_handling: 'continue' } }],
    });
    const result = await runCli(['run', wf], { stateDir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('  each... 2/4\n');
    expect(result.stdout).toContain('  each... 4/4 (1 failed)\n');
    expect(result.stdout).toMatch(/ {2}each\.\.\. 4\/4 \(1 failed\)\n {2}each\.\.\. ✓ \d+\.\ds\n/);
  });
});
