import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { runCli } from '../../../functions/hosts/cli/commands.ts';
import { LocalHost } from '../../../functions/hosts/local/local-host.ts';
import { writeWorkflow } from '../../support/cli-process.ts';
import { makeCliSandbox } from '../../support/cli-sandbox.ts';

const DAY_MS = 86_400_000;

/** A clock the test moves: nothing sleeps. */
const clock = (start: number) => {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
};

const counted = (dir: string) => ({
  before: { id: 'before', type: 'shell', params: { command: `echo before >> ${join(dir, 'log')}` } },
  after: { id: 'after', type: 'shell', params: { command: `echo after >> ${join(dir, 'log')}; echo done` } },
});

describe('the wait node on the local host', () => {
  it('pauses the run for 30 days with nothing running, and completes once the clock passes the deadline', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fm-wait-'));
    const time = clock(Date.parse('2026-11-01T00:00:00Z'));
    const store = new MemoryRunStore({ now: time.now });
    const host = new LocalHost({ store, now: time.now });
    const nodes = counted(dir);
    const workflow = WorkflowSchema.parse({
      nodes: [nodes.before, { id: 'pause', type: 'wait', params: { seconds: 30 * 86_400 } }, nodes.after],
      edges: [
        { from: 'before', to: 'pause' },
        { from: 'pause', to: 'after' },
      ],
    });
    const paused = await host.start({ workflow, workflowName: 'w', params: {}, repairEnabled: false, maxRepairs: 0, runId: 'wait-30d' });
    expect(paused.status).toBe('waiting');
    expect(paused.waiting).toMatchObject({ kind: 'time', node_id: 'pause', until: '2026-12-01T00:00:00.000Z' });
    const run = await store.getRun('wait-30d');
    const waitId = run?.wait?.id as string;

    // A wake-up before the deadline does nothing: the run still waits.
    time.advance(29 * DAY_MS);
    expect((await host.wake('wait-30d', waitId)).status).toBe('waiting');

    time.advance(DAY_MS);
    const done = await host.wake('wait-30d', waitId);
    expect(done.status).toBe('succeeded');
    expect(done.result).toMatchObject({ stdout: 'done' });
    const pause = (await store.listRecords('wait-30d')).find((r) => r.nodeId === 'pause');
    expect(pause?.outputs).toMatchObject({ waited_s: 30 * 86_400, until: '2026-12-01T00:00:00.000Z', woke_at: '2026-12-01T00:00:00.000Z' });

    // A second wake-up of the same wait (a retried schedule) does nothing: every node ran once.
    expect((await host.wake('wait-30d', waitId)).status).toBe('succeeded');
    expect(readFileSync(join(dir, 'log'), 'utf8')).toBe('before\nafter\n');
  });
});

describe('the wait node from the CLI', () => {
  const sandbox = makeCliSandbox('wait-cli');
  afterAll(() => sandbox.cleanup());
  const text = async (argv: string[]): Promise<{ code: number; stdout: string }> => {
    let stdout = '';
    const code = await runCli([...argv, '--state-dir', sandbox.stateDir], { stdout: (t) => (stdout += t), stderr: () => {}, env: {} });
    return { code, stdout };
  };

  it('returns at once from a long wait (exit 4), saying how the run goes on; resume before it is due changes nothing', async () => {
    const path = writeWorkflow(sandbox.dir, 'day', {
      nodes: [
        { id: 'day', type: 'wait', params: { seconds: 86_400 } },
        { id: 'after', type: 'shell', params: { command: `echo ran >> ${join(sandbox.dir, 'day.after')}` } },
      ],
      edges: [{ from: 'day', to: 'after' }],
    });
    const paused = await text(['run', path]);
    expect(paused.code).toBe(4);
    const runId = /flowmend resume (\S+)`/.exec(paused.stdout)?.[1] as string;
    expect(paused.stdout).toContain("⏸ Run waiting for time 'day' until ");
    expect(paused.stdout).toContain(`It goes on when due: \`flowmend serve\` wakes it, or run \`flowmend resume ${runId}\` after `);
    const early = await sandbox.json<{ status: string; waiting: { kind: string } }>(['resume', runId]);
    expect([early.code, early.json.status, early.json.waiting.kind]).toEqual([4, 'waiting', 'time']);
    expect(() => readFileSync(join(sandbox.dir, 'day.after'))).toThrow();
  });

  it('sits out a wait shorter than its bound in the terminal, and the run ends as runs do', async () => {
    const path = writeWorkflow(sandbox.dir, 'short', { nodes: [{ id: 'blink', type: 'wait', params: { seconds: 0.3 } }] });
    const done = await sandbox.json<{ status: string; result: { until: string; woke_at: string } }>(['run', path]);
    expect([done.code, done.json.status]).toEqual([0, 'succeeded']);
    // It went through the wait (paused, then woken when due), not around it.
    expect(Date.parse(done.json.result.woke_at)).toBeGreaterThanOrEqual(Date.parse(done.json.result.until));
  });

  it('fails a wait whose templated deadline resolves to something that is not a date, naming the field', async () => {
    const path = writeWorkflow(sandbox.dir, 'templated', {
      inputs: { at: { type: 'string', required: true } },
      nodes: [{ id: 'pause', type: 'wait', params: { until: '${at}' } }],
    });
    const failed = await sandbox.json<{ status: string; errors: { node_id: string; code: string; message: string }[] }>([
      'run',
      path,
      'at=next tuesday',
      '--no-repair',
    ]);
    expect([failed.code, failed.json.status]).toEqual([1, 'failed']);
    expect(failed.json.errors[0]).toMatchObject({ node_id: 'pause', code: 'PARAMS_INVALID', message: expect.stringContaining('until is an ISO 8601') });
  });
});
