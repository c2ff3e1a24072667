import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { makeCatalog } from '../../functions/core/node-type.ts';
import { prepareRun } from '../../functions/core/prepare-run.ts';
import { loadWorkflowFile } from '../../functions/hosts/cli/workflow-file.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { fileRunners } from '../../functions/nodes/catalog.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { engineNodeSpecs } from '../../functions/nodes/workflow.ts';
import { makeTempDir, runCli, spawnCrashDriver } from '../support/cli-process.ts';

// pflow's 2026 features through the real local host (the ASL, the handlers, real shell processes), from
// .pflow.md fixtures this file writes (issue 29).
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowmend-pflow-features-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runners = [shellRunner, transformRunner, ...fileRunners];

const runMarkdown = async (name: string, lines: string[], params: Record<string, unknown> = {}, store = new MemoryRunStore()) => {
  const path = join(dir, `${name}.pflow.md`);
  writeFileSync(path, lines.join('\n'));
  const loaded = await loadWorkflowFile(path);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  const prepared = prepareRun(
    { workflow: loaded.workflow, workflowName: name, params, repairEnabled: false, maxRepairs: 0 },
    makeCatalog([...runners, ...engineNodeSpecs]),
  );
  if (!prepared.ok) throw new Error(prepared.message);
  return new LocalHost({ store, runners, retryIntervalMs: 0 }).start({ ...prepared.spec, workspace: dir });
};

const step = (id: string, command: string, ...items: string[]) => [
  `### ${id}`,
  '',
  `Step ${id}.`,
  '',
  '- type: shell',
  ...items,
  '',
  '```shell command',
  command,
  '```',
  '',
];

describe('branches and ?? through the local host', () => {
  it('an on-error branch runs, and ?? takes the branch that ran (the failed node is absent to it, but its stderr is readable)', async () => {
    const report = await runMarkdown('coalesce', [
      '## Steps',
      ...step('primary', 'echo partial; echo down >&2; exit 3', '- on-error: backup'),
      ...step('backup', 'echo from backup', '- next: report'),
      ...step('report', 'echo "${primary.stdout ?? backup.stdout} after ${primary.stderr}"'),
      '## Outputs',
      '### value',
      'The value.',
      '- source: ${report.stdout}',
    ]);
    expect(report).toMatchObject({ status: 'succeeded', result: { value: 'from backup after down' } });
  });

  it("a dynamic index picks an item by another node's output", async () => {
    const report = await runMarkdown('dynamic-index', [
      '## Steps',
      ...step('list', `echo '["a","b","c"]'`),
      ...step('which', 'echo 2'),
      ...step('pick', 'echo ${list.stdout[${which.stdout}]}'),
    ]);
    expect(report).toMatchObject({ status: 'succeeded', result: { stdout: 'c' } });
  });

  it("an output whose ?? operands are all absent fails the run at the outputs (pflow's documentation: it should error)", async () => {
    const report = await runMarkdown('all-absent', [
      '## Steps',
      ...step('selector', 'echo go', '- next: fails'),
      ...step('never_run', 'echo never', '- next: end'),
      ...step('fails', 'exit 4', '- on-error: soak', '- next: end'),
      ...step('soak', 'echo soaked', '- next: end'),
      '## Outputs',
      '### content',
      'Nothing ran that has it.',
      '- source: ${never_run.stdout ?? fails.stdout}',
    ]);
    expect(report).toMatchObject({ status: 'failed', errors: [{ category: 'template', message: expect.stringContaining('no operand is present') }] });
  });
});

describe('loop: through the local host, each iteration its own record', () => {
  const counter = (extra: string[]) => [
    '## Inputs',
    '### target',
    'Where to stop.',
    '- type: integer',
    '- default: 3',
    '## Steps',
    '### count',
    'Add one to the running total.',
    '- type: shell',
    '- inputs:',
    '    total: 0',
    '- env:',
    '    TOTAL: ${total}',
    '    TARGET: ${target}',
    '    ROUND: ${__iteration__}',
    ...extra,
    '',
    '```shell command',
    't=$((TOTAL + 1)); echo "{\\"total\\": $t, \\"done\\": $([ $t -ge $TARGET ] && echo true || echo false), \\"round\\": $ROUND}"',
    '```',
    '### after',
    'Report.',
    '- type: shell',
    '- command: echo "${count.stdout.total} ${count.loop_stopped}"',
  ];

  it('carries an output into the next iteration until the condition holds; downstream reads the last iteration and loop_stopped', async () => {
    const store = new MemoryRunStore();
    const report = await runMarkdown(
      'loop-until',
      counter(['- loop:', '    carry:', '      total: ${count.stdout.total}', '    until: ${count.stdout.done}', '    max_iterations: 10']),
      {},
      store,
    );
    expect(report, JSON.stringify(report.errors)).toMatchObject({ status: 'succeeded', result: { stdout: '3 condition' } });
    const records = (await store.listRecords(report.run_id)).filter((r) => r.nodeId === 'count');
    expect(records.map((r) => [r.visit, r.iteration, r.loopContinued ?? false, JSON.parse(String(r.outputs?.stdout)).round])).toEqual([
      [1, 1, true, 1],
      [2, 2, true, 2],
      [3, 3, false, 3],
    ]);
  });

  it('stops at max_iterations without failing, and says so', async () => {
    const report = await runMarkdown(
      'loop-max',
      counter(['- loop:', '    carry:', '      total: ${count.stdout.total}', '    while: ${count.stdout.round}', '    max_iterations: 2']),
      { target: 99 },
    );
    expect(report).toMatchObject({ status: 'succeeded', result: { stdout: '2 max_iterations' } });
  });
});

describe('retry: another try of the same visit, after a Wait state', () => {
  it('tries a failing shell node again until it succeeds (a clean success), each try its own record', async () => {
    const marker = join(dir, 'tries');
    const store = new MemoryRunStore();
    const report = await runMarkdown(
      'retry-ok',
      ['## Steps', ...step('flaky', `echo x >> ${marker}; [ $(wc -l < ${marker}) -ge 3 ] || exit 7; echo ok`, '- retry:', '    max: 3', '    wait: 0')],
      {},
      store,
    );
    expect(report).toMatchObject({ status: 'succeeded', result: { stdout: 'ok' }, warnings: [] });
    const records = await store.listRecords(report.run_id);
    expect(records.map((r) => [r.visit, r.attempt, r.status, r.retried ?? false])).toEqual([
      [1, 1, 'failed', true],
      [1, 2, 'failed', true],
      [1, 3, 'completed', false],
    ]);
  });

  it('after the last try, the on-error edge routes (pflow: retry, then fall back); a deterministic failure is not tried again', async () => {
    const store = new MemoryRunStore();
    const report = await runMarkdown(
      'retry-exhausted',
      [
        '## Steps',
        '### copy',
        'Copy a file that is not there.',
        '- type: copy-file',
        '- source_path: missing.txt',
        '- dest_path: copy.txt',
        '- retry:',
        '    max: 2',
        '    wait: 1',
        '- on-error: fallback',
        '- next: done',
        ...step('fallback', 'echo fell back', '- next: done'),
        ...step('done', 'echo done'),
      ],
      {},
      store,
    );
    expect(report).toMatchObject({ status: 'succeeded', result: { stdout: 'done' } });
    const copies = (await store.listRecords(report.run_id)).filter((r) => r.nodeId === 'copy');
    expect(copies.map((r) => [r.attempt, r.error?.code, r.retried ?? false])).toEqual([
      [1, 'FILE_NOT_FOUND', true],
      [2, 'FILE_NOT_FOUND', false],
    ]);
    const events = await store.listEvents(report.run_id);
    expect(events.filter((e) => e.type === 'node_retrying')).toEqual([expect.objectContaining({ nodeId: 'copy', data: { attempt: 1, max: 2, waitS: 1 } })]);
  });
});

describe('loop: a crash in the middle and a resume', () => {
  it('resumes at the iteration after the last recorded one: earlier iterations replay, none runs twice', async () => {
    const where = makeTempDir('pflow-loop-crash');
    const log = join(where, 'rounds.log');
    const path = join(where, 'loop.pflow.md');
    writeFileSync(
      path,
      [
        '## Steps',
        '### count',
        'Count to three, one round at a time.',
        '- type: shell',
        '- inputs:',
        '    total: 0',
        '- env:',
        '    TOTAL: ${total}',
        '- loop:',
        '    carry:',
        '      total: ${count.stdout}',
        '    while: ${count.stdout}',
        '    max_iterations: 3',
        '',
        '```shell command',
        `echo "round $((TOTAL + 1))" >> ${log}; echo $((TOTAL + 1))`,
        '```',
      ].join('\n'),
    );
    const loaded = await loadWorkflowFile(path);
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
    const json = join(where, 'loop.json');
    writeFileSync(json, JSON.stringify(loaded.workflow));
    const stateDir = join(where, 'state');
    // Killed right after iteration 2's record is durable, before the run item moves on to iteration 3.
    const driver = await spawnCrashDriver({ stateDir, workflowPath: json, runId: 'loop_crash_1', crashAt: 'step:count:2' }).done;
    expect(driver.signal, driver.stderr).toBe('SIGKILL');
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['round 1', 'round 2']);
    const resumed = await runCli(['resume', 'loop_crash_1', '--output-format', 'json'], { stateDir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({
      status: 'succeeded',
      result: { stdout: '3', loop_stopped: 'max_iterations' },
      metrics: { nodes_cached: 2 },
    });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual(['round 1', 'round 2', 'round 3']);
  });
});
