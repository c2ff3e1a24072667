import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { countLines, killStrayChildren, makeTempDir, parseJsonOutput, runCli, spawnCli, writeWorkflow } from '../support/cli-process.ts';
import { request, startServe } from '../support/serve-process.ts';

/**
 * A cancel that comes while a node waits between two tries (its `retry`) stops the next try: no side
 * effect happens after the cancel. The next try is refused after the wait, when the engine checks the run
 * before the runner starts (definition.ts's CheckRun), on both hosts.
 */

const dir = makeTempDir('cancel-retry');
afterEach(() => killStrayChildren());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Fails on every try, after appending one line: each line is one try's side effect. */
const failingWithRetry = (at: string, waitS: number): WorkflowInput => ({
  ir_version: '0.1.0',
  nodes: [{ id: 'flaky', type: 'shell', params: { command: `echo try >> ${at}/tries; exit 3` }, retry: { max: 3, wait: waitS } }],
});

/** Polls the run's own store until its next try is waiting (the retry's record is committed); the run and when that try starts. */
const waitForRetryWait = async (stateDir: string): Promise<{ runId: string; startsAt: number }> => {
  const store = SqliteRunStore.open(stateDir);
  try {
    for (let polls = 0; polls < 600; polls += 1) {
      const [run] = await store.listRuns({ limit: 1 });
      if (run?.current?.attempt === 2) return { runId: run.runId, startsAt: run.current.startedAt };
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    store.close();
  }
  throw new Error('the run never reached its second try');
};

describe('a cancel during a retry wait', () => {
  it('flowmend cancel from another process: the next try never runs and the run ends cancelled', async () => {
    const at = makeTempDir('cancel-retry-cli');
    const stateDir = join(at, 'state');
    const driver = spawnCli(['run', writeWorkflow(at, 'flaky', failingWithRetry(at, 4))], { stateDir });
    const { runId } = await waitForRetryWait(stateDir);
    expect(countLines(join(at, 'tries'))).toBe(1);

    const cancel = await runCli(['cancel', runId, '--output-format', 'json'], { stateDir });
    const driven = await driver.done;
    // The retry's wait is over when the driver ends: a try after the cancel would have written its line by now.
    expect(countLines(join(at, 'tries'))).toBe(1);
    expect(parseJsonOutput(cancel)).toMatchObject({ success: true, status: 'cancelled', interrupted_node: 'flaky', node_outcome: 'not_started' });
    expect(driven.code).toBe(1);
    expect(`${driven.stdout}${driven.stderr}`).toMatch(/cancelled/i);

    const status = parseJsonOutput<{ status: string; steps: { node_id: string; status: string }[] }>(
      await runCli(['status', runId, '--output-format', 'json'], { stateDir }),
    );
    expect(status.status).toBe('cancelled');
    expect(status.steps.map((s) => s.status)).toEqual(['failed', 'interrupted']);
  }, 60_000);

  it("serve's API: the cancel ends the wait, the next try never runs, and the answer says it had not started", async () => {
    const at = makeTempDir('cancel-retry-api');
    const stateDir = join(at, 'state');
    const serve = await startServe(stateDir);
    try {
      const started = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow: failingWithRetry(at, 3) } });
      expect(started.status).toBe(202);
      const { runId, startsAt } = await waitForRetryWait(stateDir);
      const cancelled = await request(serve.url, 'POST', `/runs/${runId}/cancel`);
      expect(cancelled.body).toMatchObject({ status: 'cancelled', interrupted_node: 'flaky', node_outcome: 'not_started' });
      // Past the moment the second try would have started (and run: it takes milliseconds).
      await new Promise((r) => setTimeout(r, Math.max(0, startsAt - Date.now()) + 1_500));
      expect(countLines(join(at, 'tries'))).toBe(1);
      const report = (await request<{ status: string; steps: { status: string }[] }>(serve.url, 'GET', `/runs/${runId}`)).body;
      expect(report.status).toBe('cancelled');
      expect(report.steps.map((s) => s.status)).toEqual(['failed', 'interrupted']);
    } finally {
      await serve.stop();
    }
  }, 60_000);
});
