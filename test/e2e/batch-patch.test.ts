import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../functions/core/run-report.ts';
import { makeCliSandbox } from '../support/cli-sandbox.ts';

const sandbox = makeCliSandbox('batch-patch');
const { dir } = sandbox;
afterAll(sandbox.cleanup);

type Report = RunReport & { error?: string };
const cli = (argv: string[]) => sandbox.json<Report>(argv);
const write = (name: string, workflow: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(workflow));
  return path;
};
const lastBatch = (report: Report, nodeId: string) => report.steps.filter((s) => s.node_id === nodeId && s.batch).at(-1)?.batch;

describe('a patched batch resumed (flowmend resume --workflow)', () => {
  it('re-runs only the items whose resolved params changed; unchanged completed items are replayed', async () => {
    const wf = (items: number[]) => ({
      nodes: [{ id: 'each', type: 'transform', params: { expression: "$ = 5 ? $error('five is not allowed') : $ * 10", input: '${item}' }, batch: { items } }],
      outputs: { results: { source: '${each.results}' } },
    });
    const failed = await cli(['run', write('t1.json', wf([1, 2, 3, 4, 5, 6])), '--no-repair']);
    expect(failed.code).toBe(1);
    expect(failed.json.errors[0]?.message).toContain('item 5 of 6 failed');

    const resumed = await cli(['resume', failed.json.run_id, '--workflow', write('t2.json', wf([1, 2, 3, 40, 50, 6]))]);
    expect(resumed.code, JSON.stringify(resumed.json)).toBe(0);
    expect(resumed.json.result.results).toEqual([10, 20, 30, 400, 500, 60].map((result) => ({ result })));
    const items = lastBatch(resumed.json, 'each')?.items ?? [];
    expect(items.filter((i) => i.replayed).map((i) => i.index)).toEqual([0, 1, 2]);
    expect(items.filter((i) => !i.replayed).map((i) => i.index)).toEqual([3, 4, 5]);
  });

  it('never runs a completed side-effecting item again: a patch that changes one is blocked and nothing re-runs', async () => {
    const side = join(dir, 'side');
    const wf = (items: string[]) => ({
      nodes: [{ id: 'send', type: 'shell', params: { command: `test \${item} != c || exit 4; echo \${__index__} >> ${side}` }, batch: { items } }],
    });
    const failed = await cli(['run', write('s1.json', wf(['a', 'b', 'c', 'd'])), '--no-repair']);
    expect(failed.code).toBe(1);
    expect(readFileSync(side, 'utf8')).toBe('0\n1\n');

    const blocked = await cli(['resume', failed.json.run_id, '--workflow', write('s2.json', wf(['a', 'B', 'x', 'd']))]);
    expect(blocked.code).toBe(1);
    expect(blocked.json.errors[0]).toMatchObject({
      code: 'SIDE_EFFECT_BLOCKED',
      message: expect.stringContaining("item 2 of batch node 'send' has side effects"),
    });
    expect(readFileSync(side, 'utf8')).toBe('0\n1\n');
  });
});
