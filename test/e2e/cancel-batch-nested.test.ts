import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import {
  blockingCommand,
  countLines,
  killStrayChildren,
  makeTempDir,
  parseJsonOutput,
  runCli,
  spawnCli,
  waitForFile,
  writeWorkflow,
} from '../support/cli-process.ts';

/**
 * What a cancel says, and leaves, when what runs is a batch's items or a nested workflow's child run: the
 * canceller names what was cut, `status` shows no step still running, and a child run ends cancelled,
 * saying it was cancelled with its parent.
 */

const dir = makeTempDir('cancel-nested');
afterEach(() => killStrayChildren());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Status = { status: string; errors: { message: string; node_id?: string }[]; steps: { node_id: string; status: string; batch?: unknown }[] };

const runIdOf = async (stateDir: string, all = false): Promise<{ run_id: string; parent_run_id?: string }[]> =>
  parseJsonOutput<{ runs: { run_id: string; parent_run_id?: string }[] }>(
    await runCli(['runs', ...(all ? ['--all'] : []), '--output-format', 'json'], { stateDir }),
  ).runs;

describe('a cancel while a batch runs', () => {
  it('names the batch and how far it got; status shows the batch interrupted, not running', async () => {
    const at = makeTempDir('cancel-batch');
    const stateDir = join(at, 'state');
    const workflow: WorkflowInput = {
      ir_version: '0.1.0',
      nodes: [
        {
          id: 'each',
          type: 'shell',
          // Item 1 blocks until the go file; the others would count at once, so one at a time.
          params: { command: `[ "\${item}" = 1 ] && { ${blockingCommand(at, 'first', { countFirst: false })}; }; echo \${item} >> ${at}/items` },
          batch: { items: [1, 2, 3], parallel: false },
        },
      ],
    };
    const driver = spawnCli(['run', writeWorkflow(at, 'batch', workflow)], { stateDir });
    await waitForFile(join(at, 'first.started'), 'the first item to start');
    const [run] = await runIdOf(stateDir);
    const runId = run?.run_id as string;

    const cancel = await runCli(['cancel', runId], { stateDir });
    expect(cancel.stdout).toContain(`✗ Run ${runId} cancelled: batch 'each' was cut after 1 of 3 items had started`);
    expect(cancel.stdout).not.toContain('no node was running');
    const driven = await driver.done;
    writeFileSync(join(at, 'go'), '');
    expect(driven.code).toBe(1);
    expect(countLines(join(at, 'items'))).toBe(0);

    const status = parseJsonOutput<Status>(await runCli(['status', runId, '--output-format', 'json'], { stateDir }));
    expect(status.status).toBe('cancelled');
    expect(status.steps).toEqual([expect.objectContaining({ node_id: 'each', status: 'interrupted' })]);
    expect(status.errors[0]).toMatchObject({ node_id: 'each' });

    const resumed = parseJsonOutput<Status>(await runCli(['resume', runId, '--output-format', 'json'], { stateDir }));
    expect(resumed.status).toBe('succeeded');
    expect(countLines(join(at, 'items'))).toBe(3);
  }, 90_000);
});

describe('a cancel while a nested workflow runs', () => {
  it('cancels the child run too, names it, says its node was stopped, and the child says it was cancelled with its parent', async () => {
    const at = makeTempDir('cancel-child');
    const stateDir = join(at, 'state');
    const inner = { ir_version: '0.1.0', nodes: [{ id: 'inner', type: 'shell', params: { command: blockingCommand(at, 'inner', { countFirst: false }) } }] };
    const workflow: WorkflowInput = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'sub', type: 'workflow', params: { workflow_ir: inner } },
        { id: 'after', type: 'shell', params: { command: `echo ran >> ${at}/after.count` } },
      ],
      edges: [{ from: 'sub', to: 'after', action: 'default' }],
    };
    const driver = spawnCli(['run', writeWorkflow(at, 'parent', workflow)], { stateDir });
    await waitForFile(join(at, 'inner.started'), 'the child run to start its node');
    const runs = await runIdOf(stateDir, true);
    const parentId = runs.find((r) => r.parent_run_id === undefined)?.run_id as string;
    const childId = runs.find((r) => r.parent_run_id !== undefined)?.run_id as string;
    expect(childId).toBeDefined();

    const cancel = await runCli(['cancel', parentId], { stateDir });
    expect(cancel.stdout).toContain(`✗ Run ${parentId} cancelled: 'sub' ran child run ${childId}, cancelled with it: its node 'inner' was stopped`);
    expect(cancel.stdout).not.toContain('no process has confirmed');
    const driven = await driver.done;
    writeFileSync(join(at, 'go'), '');
    expect(driven.code).toBe(1);
    expect(countLines(join(at, 'inner.count'))).toBe(0);
    expect(countLines(join(at, 'after.count'))).toBe(0);

    const child = parseJsonOutput<Status>(await runCli(['status', childId, '--output-format', 'json'], { stateDir }));
    expect(child.status).toBe('cancelled');
    expect(child.errors[0]?.message).toBe(`cancelled with its parent run ${parentId} (node 'sub')`);
    expect(child.steps).toEqual([expect.objectContaining({ node_id: 'inner', status: 'interrupted' })]);
    const parent = parseJsonOutput<Status>(await runCli(['status', parentId, '--output-format', 'json'], { stateDir }));
    expect(parent.status).toBe('cancelled');
  }, 90_000);
});
