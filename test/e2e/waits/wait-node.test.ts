import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { LocalHost } from '../../../functions/hosts/local/local-host.ts';

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
