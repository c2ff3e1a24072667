import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { awaitCancelledStep, cancelRun } from '../../functions/core/cancel-run.ts';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { groupAlive } from '../../functions/nodes/process-groups.ts';
import { blockingCommand, countLines, killStrayChildren, makeTempDir, runCli, spawnCli, waitForFile, writeWorkflow } from '../support/cli-process.ts';

/**
 * A cancel stops the node in flight, so its side effect never lands after the cancel (issue 27): the
 * command's process group is killed, the node is recorded interrupted (stopped), and a resume runs it
 * again as after a crash. A node that finished before the cancel reached it keeps its result, and a
 * resume replays it instead of running it twice.
 */

const dir = makeTempDir('cancel');
afterEach(() => killStrayChildren());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const twoNodes = (at: string): WorkflowInput => ({
  ir_version: '0.1.0',
  nodes: [
    // Counts only after the test's go file: a killed command never counts.
    { id: 'slow', type: 'shell', params: { command: blockingCommand(at, 'slow', { countFirst: false }) } },
    { id: 'after', type: 'shell', params: { command: `echo ran >> ${at}/after.count` } },
  ],
  edges: [{ from: 'slow', to: 'after', action: 'default' }],
});

/** Whether the command's process group is gone (its zombies, which no init may reap here, count as gone), waiting a little. */
const groupGone = async (pidFile: string): Promise<boolean> => {
  const pgid = Number(readFileSync(pidFile, 'utf8').trim());
  for (let tries = 0; tries < 50; tries += 1) {
    if (!(await groupAlive(pgid))) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
};

describe('flowmend cancel from another process', () => {
  it('stops the running command, says so on both sides, and a resume runs the node again', async () => {
    const at = makeTempDir('cancel-cli');
    const stateDir = join(at, 'state');
    const path = writeWorkflow(at, 'slow', twoNodes(at));
    const driver = spawnCli(['run', path], { stateDir });
    await waitForFile(join(at, 'slow.started'), 'the slow node to start');
    const listed = JSON.parse((await runCli(['runs', '--output-format', 'json'], { stateDir })).stdout) as { runs: { run_id: string }[] };
    const runId = listed.runs[0]?.run_id as string;

    const cancel = await runCli(['cancel', runId], { stateDir });
    expect(cancel.stdout).toContain(`✗ Run ${runId} cancelled: 'slow' was stopped (its processes killed, its request aborted)`);
    expect(await groupGone(join(at, 'slow.pid'))).toBe(true);
    const driven = await driver.done;
    expect(driven.code).toBe(1);
    expect(`${driven.stdout}${driven.stderr}`).not.toMatch(/another writer|StaleRunError/);
    expect(`${driven.stdout}${driven.stderr}`).toMatch(/cancelled/i);
    expect(driven.stdout).not.toContain('ran again');
    // The command was killed before its side effect; the go file now lets only a new run of it through.
    writeFileSync(join(at, 'go'), '');
    expect(countLines(join(at, 'slow.count'))).toBe(0);
    const status = JSON.parse((await runCli(['status', runId, '--output-format', 'json'], { stateDir })).stdout);
    expect(status.steps).toEqual([expect.objectContaining({ node_id: 'slow', status: 'interrupted' })]);
    // The node did not run again (yet): its status says it was stopped, not that it ran again.
    const text = (await runCli(['status', runId], { stateDir })).stdout;
    expect(text).toMatch(/slow\.\.\. ✗ interrupted: 'slow' was stopped by the cancel/);
    expect(text).not.toContain('ran again');

    const resumed = await runCli(['resume', runId, '--output-format', 'json'], { stateDir });
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'succeeded' });
    expect([countLines(join(at, 'slow.count')), countLines(join(at, 'after.count'))]).toEqual([1, 1]);
  }, 120_000);
});

describe('a node that finished before the cancel reached it', () => {
  it('keeps its result: the cancel says so, and a resume replays it instead of running it again', async () => {
    const at = makeTempDir('cancel-finished');
    const store = new MemoryRunStore();
    // No poll within the test: the cancel is written to the store and the command finishes on its own.
    const host = new LocalHost({ store, cancelPollMs: 600_000 });
    const runId = 'run-finished-1';
    const driving = host.start({ workflow: WorkflowSchema.parse(twoNodes(at)), workflowName: 'slow', params: {}, repairEnabled: false, maxRepairs: 0, runId });
    await waitForFile(join(at, 'slow.started'), 'the slow node to start');
    const cancelled = await cancelRun(store, runId, Date.now());
    expect(cancelled.interruptedNode).toBe('slow');
    writeFileSync(join(at, 'go'), '');
    const report = await driving;
    expect(report.status).toBe('cancelled');
    const outcome = await awaitCancelledStep(store, runId, cancelled.interruptedSeq as number, { timeoutMs: 0, sleep: async () => undefined });
    expect(outcome).toBe('finished');
    expect(existsSync(join(at, 'after.count'))).toBe(false);

    const resumed = await new LocalHost({ store }).resume(runId);
    expect(resumed.status).toBe('succeeded');
    expect(resumed.steps.filter((s) => s.node_id === 'slow').map((s) => s.status)).toEqual(['completed', 'cached']);
    expect([countLines(join(at, 'slow.count')), countLines(join(at, 'after.count'))]).toEqual([1, 1]);
  });
});
