import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { RunReport } from '../../functions/core/run-report.ts';
import { groupAlive } from '../../functions/nodes/process-groups.ts';
import {
  blockingCommand,
  countLines,
  killShellGroup,
  killStrayChildren,
  makeTempDir,
  runCli,
  spawnCli,
  waitForFile,
  within,
  writeWorkflow,
} from '../support/cli-process.ts';
import { runCliJson } from '../support/cli-sandbox.ts';

// A batch over a workflow node (issue 29): each item is a child run with its own id and checkpoints, through
// the real local host, the real ASL, real shell processes and SQLite on disk; counter files are the side effects.
const dir = makeTempDir('nested-batch');
afterEach(() => killStrayChildren());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Child = RunReport & { node_id: string; index?: number };
type Report = RunReport & { children?: Child[] };
const cli = (stateDir: string, argv: string[]) => runCliJson<Report>(stateDir, argv);

const ITEMS = ['a', 'b', 'c'];

/** Child: `c1` counts its item and shouts it; `c2` runs `c2Command` (per item), then repeats c1's shout. */
const child = (where: string, c2Command: string) => ({
  inputs: { name: { type: 'string' as const, required: true } },
  nodes: [
    { id: 'c1', type: 'shell', params: { command: `echo "\${name}" >> ${join(where, 'c1.log')}; echo "\${name}" | tr a-z A-Z` } },
    { id: 'c2', type: 'shell', params: { command: `echo "\${name}" >> ${join(where, 'c2.log')}; ${c2Command} echo "\${c1.stdout}!"` } },
  ],
  edges: [{ from: 'c1', to: 'c2' }],
  outputs: { shout: { source: '${c2.stdout}' } },
});

/** Parent: `each` runs the child once per item (parallel, as pflow's example asks), `after` reads the results. */
const parent = (where: string, c2Command = '') => ({
  nodes: [
    {
      id: 'each',
      type: 'workflow',
      params: { workflow_ir: child(where, c2Command), param_mapping: { name: '${item}' } },
      batch: { items: ITEMS, parallel: true, max_concurrent: 3 },
    },
    { id: 'after', type: 'shell', params: { command: `echo ran >> ${join(where, 'after.log')}; echo "\${each.success_count}"` } },
  ],
  edges: [{ from: 'each', to: 'after' }],
  outputs: { shouts: { source: '${each.results}' }, done: { source: '${after.stdout}' } },
});

/** How often each item's node ran: `{ a: 1, b: 2, ... }` from a node's log of item names. */
const ranPerItem = (where: string, node: string): Record<string, number> => {
  const counts: Record<string, number> = {};
  let lines: string[] = [];
  try {
    lines = readFileSync(join(where, `${node}.log`), 'utf8')
      .split('\n')
      .filter(Boolean);
  } catch {}
  for (const line of lines) counts[line] = (counts[line] ?? 0) + 1;
  return counts;
};

const childIds = (report: Report): (string | undefined)[] =>
  ITEMS.map((_, index) => report.children?.find((c) => c.node_id === 'each' && c.index === index)?.run_id);

describe('batch over a workflow node', () => {
  it('runs each item as its own child run and returns the children’s outputs in item order', async () => {
    const where = makeTempDir('nb-ok');
    const { code, json } = await cli(join(where, 'state'), ['run', writeWorkflow(where, 'parent', parent(where))]);
    expect(code, JSON.stringify(json.errors)).toBe(0);
    expect(json.result).toEqual({ shouts: [{ shout: 'A!' }, { shout: 'B!' }, { shout: 'C!' }], done: '3' });
    const ids = childIds(json);
    expect(new Set(ids).size).toBe(3);
    expect(json.children?.map((c) => [c.index, c.status, c.parent?.run_id])).toEqual(ITEMS.map((_, i) => [i, 'succeeded', json.run_id]));
    expect(ranPerItem(where, 'c1')).toEqual({ a: 1, b: 1, c: 1 });
    // One child at a time, in item order (the log of each child's two nodes never interleaves with another's).
    expect(readFileSync(join(where, 'c1.log'), 'utf8')).toBe('a\nb\nc\n');
    expect(readFileSync(join(where, 'c2.log'), 'utf8')).toBe('a\nb\nc\n');
  });

  it("fails with the failed item's child; a resume re-runs only that child, from its failed node", async () => {
    const where = makeTempDir('nb-fail');
    const stateDir = join(where, 'state');
    const gate = join(where, 'gate');
    // Item b's c2 fails until the gate exists (a fault a person fixes before resuming).
    const path = writeWorkflow(where, 'parent', parent(where, `test "\${name}" != b -o -f ${gate} &&`));
    // Repair on (rules only, no LLM key): the child tries its own; the parent does not try again for it.
    const failed = await cli(stateDir, ['run', path]);
    expect(failed.code).toBe(1);
    expect(failed.json.errors[0]).toMatchObject({ node_id: 'each', code: 'BATCH_ITEM_FAILED', fixable: false });
    expect(failed.json.repairs).toEqual([]);
    expect(failed.json.errors[0]?.message).toMatch(/item 2 of 3 failed: .*child run .* failed at node 'c2'/);
    // fail_fast (pflow's default): item c never started.
    expect([ranPerItem(where, 'c1'), ranPerItem(where, 'c2')]).toEqual([
      { a: 1, b: 1 },
      { a: 1, b: 1 },
    ]);
    const before = childIds(failed.json);
    expect(failed.json.children?.map((c) => c.status)).toEqual(['succeeded', 'failed']);

    writeFileSync(gate, '');
    const resumed = await cli(stateDir, ['resume', failed.json.run_id]);
    expect(resumed.code, JSON.stringify(resumed.json.errors)).toBe(0);
    expect(resumed.json.result).toEqual({ shouts: [{ shout: 'A!' }, { shout: 'B!' }, { shout: 'C!' }], done: '3' });
    // a: replayed from its item record; b: the same child run, its c1 replayed and its c2 run again; c: a new child.
    expect([ranPerItem(where, 'c1'), ranPerItem(where, 'c2')]).toEqual([
      { a: 1, b: 1, c: 1 },
      { a: 1, b: 2, c: 1 },
    ]);
    const after = childIds(resumed.json);
    expect(after.slice(0, 2)).toEqual(before.slice(0, 2));
    expect(resumed.json.children).toHaveLength(3);
    const b = resumed.json.children?.find((c) => c.index === 1);
    expect(b?.steps.map((s) => [s.node_id, s.status])).toEqual([
      ['c1', 'completed'],
      ['c2', 'failed'],
      ['c1', 'cached'],
      ['c2', 'completed'],
    ]);
    expect(resumed.json.steps.filter((s) => s.node_id === 'each').map((s) => [s.status, s.batch?.replayed_count])).toEqual([
      ['failed', 0],
      ['completed', 1],
    ]);
  });

  it('resumes a parent killed (SIGKILL) while an item’s child ran: that child is taken over, no second one starts', async () => {
    const where = makeTempDir('nb-kill');
    const stateDir = join(where, 'state');
    const path = writeWorkflow(where, 'parent', parent(where, `if [ "\${name}" = b ]; then ${blockingCommand(where, 'b2', { countFirst: false })}; fi;`));
    const running = spawnCli(['run', path, '--output-format', 'json'], { stateDir });
    await waitForFile(join(where, 'b2.started'), "item b's c2 to start");
    running.child.kill('SIGKILL');
    expect((await running.done).signal).toBe('SIGKILL');
    killShellGroup(join(where, 'b2.pid'));
    const listed = JSON.parse((await runCli(['runs', '--output-format', 'json'], { stateDir })).stdout) as { runs: { run_id: string }[] };
    const runId = listed.runs[0]?.run_id as string;
    const all = JSON.parse((await runCli(['runs', '--all', '--output-format', 'json'], { stateDir })).stdout) as { runs: unknown[] };
    expect(all.runs).toHaveLength(3);

    writeFileSync(join(where, 'go'), '');
    const resumed = await cli(stateDir, ['resume', runId]);
    expect(resumed.code, JSON.stringify(resumed.json.errors)).toBe(0);
    expect(resumed.json.result).toMatchObject({ shouts: [{ shout: 'A!' }, { shout: 'b2-done\nB!' }, { shout: 'C!' }] });
    // Parent plus one child per item, b's the one started before the kill.
    expect((JSON.parse((await runCli(['runs', '--all', '--output-format', 'json'], { stateDir })).stdout) as { runs: unknown[] }).runs).toHaveLength(4);
    expect([ranPerItem(where, 'c1'), countLines(join(where, 'b2.count')), ranPerItem(where, 'after')]).toEqual([{ a: 1, b: 1, c: 1 }, 1, { ran: 1 }]);
    expect(resumed.json.children?.find((c) => c.index === 1)?.steps.find((s) => s.node_id === 'c2')).toMatchObject({ interrupted: true });
  }, 120_000);

  it('cancels the running child with its parent: its command is stopped, later items never start, a resume finishes', async () => {
    const where = makeTempDir('nb-cancel');
    const stateDir = join(where, 'state');
    const path = writeWorkflow(where, 'parent', parent(where, `if [ "\${name}" = b ]; then ${blockingCommand(where, 'b2', { countFirst: false })}; fi;`));
    const driver = spawnCli(['run', path], { stateDir });
    // Each wait bounded and named: a hang (seen once in a full run, never alone) says which process and what the driver printed.
    const printed = () => `the driver printed:\n${driver.output().stdout}\n${driver.output().stderr}`;
    await waitForFile(join(where, 'b2.started'), "item b's c2 to start");
    const runs = await within(runCli(['runs', '--output-format', 'json'], { stateDir }), 'flowmend runs', 30_000, printed);
    const listed = JSON.parse(runs.stdout) as { runs: { run_id: string }[] };
    const runId = listed.runs[0]?.run_id as string;

    const cancel = await within(runCli(['cancel', runId], { stateDir }), 'flowmend cancel', 30_000, printed);
    expect(cancel.code, cancel.stderr).toBe(0);
    const pgid = Number(readFileSync(join(where, 'b2.pid'), 'utf8').trim());
    let alive = true;
    for (let tries = 0; tries < 50 && alive; tries += 1) {
      alive = await groupAlive(pgid);
      if (alive) await new Promise((r) => setTimeout(r, 100));
    }
    expect(alive).toBe(false);
    expect((await within(driver.done, "the cancelled run's driver to exit", 30_000, printed)).code).toBe(1);
    const status = await within(cli(stateDir, ['status', runId]), 'flowmend status', 30_000);
    expect(status.json.status).toBe('cancelled');
    expect(status.json.children?.map((c) => [c.index, c.status])).toEqual([
      [0, 'succeeded'],
      [1, 'cancelled'],
    ]);
    expect(ranPerItem(where, 'c1')).toEqual({ a: 1, b: 1 });
    expect(countLines(join(where, 'b2.count'))).toBe(0);

    writeFileSync(join(where, 'go'), '');
    const resumed = await within(cli(stateDir, ['resume', runId]), 'flowmend resume', 30_000);
    expect(resumed.code, JSON.stringify(resumed.json.errors)).toBe(0);
    expect([ranPerItem(where, 'c1'), countLines(join(where, 'b2.count'))]).toEqual([{ a: 1, b: 1, c: 1 }, 1]);
    expect(resumed.json.children).toHaveLength(3);
  }, 120_000);
});

describe('batch over a workflow node: validation', () => {
  it('refuses more items than the parent can list children for, before any child starts', async () => {
    const where = makeTempDir('nb-limit');
    const items = Array.from({ length: 251 }, (_, i) => `i${i}`);
    const many = { nodes: [{ id: 'each', type: 'workflow', params: { workflow_ir: child(where, ''), param_mapping: { name: '${item}' } }, batch: { items } }] };
    const { code, json } = await cli(join(where, 'state'), ['run', writeWorkflow(where, 'many', many)]);
    expect(code).toBe(1);
    expect(json.errors[0]).toMatchObject({ node_id: 'each', code: 'BATCH_ITEM_LIMIT', message: expect.stringContaining('over the 250'), fixable: false });
    expect(json.children ?? []).toEqual([]);
    expect(ranPerItem(where, 'c1')).toEqual({});
  });

  it('resolves a templated workflow_ref from the literal items, and refuses one it cannot resolve to one file', async () => {
    const where = makeTempDir('nb-ref');
    writeWorkflow(where, 'child', child(where, ''));
    writeWorkflow(where, 'other', child(where, ''));
    const node = (items: string | unknown[]) => ({
      nodes: [{ id: 'each', type: 'workflow', params: { workflow_ref: '${item.wf}', param_mapping: { name: '${item.name}' } }, batch: { items } }],
    });
    const one = writeWorkflow(
      where,
      'one',
      node([
        { wf: './child.json', name: 'x' },
        { wf: './child.json', name: 'y' },
      ]),
    );
    const ok = await cli(join(where, 'state'), ['run', one]);
    expect(ok.code, JSON.stringify(ok.json)).toBe(0);
    expect(ok.json.children?.map((c) => c.result)).toEqual([{ shout: 'X!' }, { shout: 'Y!' }]);

    type Issues = { issues: { code: string; message: string; path: string }[] };
    const two = writeWorkflow(
      where,
      'two',
      node([
        { wf: './child.json', name: 'x' },
        { wf: './other.json', name: 'y' },
      ]),
    );
    const mixed = await runCliJson<Issues>(join(where, 'state'), ['validate', two]);
    expect(mixed.code).toBe(2);
    expect(mixed.json.issues).toEqual([
      expect.objectContaining({
        code: 'WORKFLOW_REF_TEMPLATED',
        path: 'nodes[0].params.workflow_ref',
        message: expect.stringContaining('names 2 different workflows'),
      }),
    ]);
    const fromNode = writeWorkflow(where, 'three', { inputs: { list: { type: 'array', required: true } }, ...node('${list}') });
    const late = await runCliJson<Issues>(join(where, 'state'), ['validate', fromNode]);
    expect(late.json.issues).toEqual([
      expect.objectContaining({ code: 'WORKFLOW_REF_TEMPLATED', message: expect.stringContaining("only from a batch's literal items") }),
    ]);
  });
});
