import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDynalite } from '../../functions/adapters/dynalite-server.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import { runCli as runCliInProcess } from '../../functions/hosts/cli/commands.ts';
import { killStrayChildren, makeTempDir, parseJsonOutput, runCli, spawnCli, spawnCrashDriver, writeWorkflow } from '../support/cli-process.ts';

// Several processes on one state dir share <state-dir>/flowmend.db through SQLite's own locks (no daemon).
const dir = makeTempDir('sqlite-processes');
const stateDir = join(dir, 'state');
afterAll(() => {
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

const chain = (length: number) => ({
  nodes: Array.from({ length }, (_, i) => ({ id: `n${i}`, type: 'transform', params: { expression: '$ + 1', input: i === 0 ? 0 : `\${n${i - 1}.result}` } })),
  edges: Array.from({ length: length - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
  outputs: { total: { source: `\${n${length - 1}.result}` } },
});

// Child processes start slowly on a loaded machine (seconds each when other suites run beside these);
// a hang still fails, at this bound.
const MANY_PROCESSES_MS = 300_000;

describe('one SQLite state dir shared by many processes', () => {
  it(
    'runs 20 workflows started at once from 20 processes, each to its own result',
    async () => {
      const workflow = writeWorkflow(dir, 'concurrent', chain(3));
      const runs = Array.from({ length: 20 }, () => spawnCli(['run', workflow, '--output-format', 'json'], { stateDir }));
      const results = await Promise.all(runs.map((r) => r.done));
      for (const result of results) expect(result.code, result.stderr).toBe(0);
      const reports = results.map((result) => parseJsonOutput<RunReport>(result));
      expect(new Set(reports.map((r) => r.run_id)).size).toBe(20);
      for (const report of reports) expect(report).toMatchObject({ success: true, result: { total: 3 } });

      const listed = parseJsonOutput<{ runs: { run_id: string; status: string }[] }>(
        await runCli(['runs', '--limit', '50', '--output-format', 'json'], { stateDir }),
      );
      const mine = listed.runs.filter((r) => reports.some((report) => report.run_id === r.run_id));
      expect(mine.map((r) => r.status)).toEqual(Array(20).fill('succeeded'));
    },
    MANY_PROCESSES_MS,
  );

  it(
    'keeps the committed records of a run killed with SIGKILL, on disk for the next process that opens the file',
    async () => {
      const workflow = writeWorkflow(dir, 'killed', chain(4));
      const runId = 'killed_after_n1';
      const driver = spawnCrashDriver({ stateDir, workflowPath: workflow, runId, crashAt: 'step:n1:1' });
      const result = await driver.done;
      expect(result.signal, result.stderr).toBe('SIGKILL');

      const store = SqliteRunStore.open(stateDir);
      try {
        const run = await store.getRun(runId);
        const committed = [...(run?.pendingRecords ?? []), ...(await store.listRecords(runId))];
        expect(committed.filter((r) => r.status === 'completed').map((r) => [r.nodeId, r.outputs])).toEqual(
          expect.arrayContaining([
            ['n0', { result: 1 }],
            ['n1', { result: 2 }],
          ]),
        );
        expect(run?.status).toBe('running');
      } finally {
        store.close();
      }
      const resumed = await runCli(['resume', runId, '--output-format', 'json'], { stateDir });
      expect(resumed.code, resumed.stderr).toBe(0);
      const report = parseJsonOutput<RunReport>(resumed);
      expect(report).toMatchObject({ success: true, result: { total: 4 } });
      expect(report.steps.filter((s) => s.cached).map((s) => s.node_id)).toEqual(['n0', 'n1']);
    },
    MANY_PROCESSES_MS,
  );
});

describe('flowmend --store dynamodb', () => {
  it('runs and reads a run on a DynamoDB named by AWS_ENDPOINT_URL and --table', async () => {
    const dynalite = await startDynalite();
    try {
      const workflow = writeWorkflow(dir, 'on-dynamo', chain(2));
      const env = { AWS_ENDPOINT_URL: dynalite.endpoint };
      const cli = async (argv: string[]) => {
        let stdout = '';
        const code = await runCliInProcess(
          [...argv, '--store', 'dynamodb', '--table', 'cli-table', '--state-dir', join(dir, 'dynamo-state'), '--output-format', 'json'],
          {
            stdout: (t) => (stdout += t),
            stderr: () => {},
            env,
          },
        );
        return { code, json: JSON.parse(stdout) as RunReport };
      };
      const ran = await cli(['run', workflow]);
      expect(ran).toMatchObject({ code: 0, json: { success: true, result: { total: 2 } } });
      const status = await cli(['status', ran.json.run_id]);
      expect(status).toMatchObject({ code: 0, json: { status: 'succeeded', run_id: ran.json.run_id } });
    } finally {
      await dynalite.close();
    }
  });

  it('says what is missing when no region or endpoint is set', async () => {
    let stdout = '';
    const code = await runCliInProcess(['runs', '--store', 'dynamodb', '--output-format', 'json'], { stdout: (t) => (stdout += t), stderr: () => {}, env: {} });
    expect(code).toBe(1);
    expect(JSON.parse(stdout)).toMatchObject({ success: false, error: expect.stringMatching(/needs a region: set AWS_REGION/) });
  });
});
