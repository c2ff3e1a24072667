// `flowmend serve` answers a long-poll as soon as the run it drives writes, not at the next poll: serve runs
// here in this process (runServe, the code `flowmend serve` runs) with its poll at 60 s, over real HTTP, so
// a long-poll that was not woken would hold its answer past the test's timeout.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { runServe } from '../../functions/hosts/cli/serve.ts';
import { killStrayChildren, makeTempDir, waitForFile } from '../support/cli-process.ts';
import { request } from '../support/serve-process.ts';

let dir: string;
let api: string;
let stop: () => void;
let stopped: Promise<void>;
beforeAll(async () => {
  dir = makeTempDir('serve-wake');
  const untilStopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  api = await new Promise<string>((listening, fail) => {
    stopped = runServe({
      stateDir: join(dir, 'state'),
      port: 0,
      host: '127.0.0.1',
      manualClock: true,
      workspace: dir,
      log: () => {},
      onListening: listening,
      untilStopped: () => untilStopped,
      pollIntervalMs: 60_000,
    });
    stopped.catch(fail);
  });
});
afterAll(async () => {
  stop?.();
  await stopped;
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

interface Page {
  status: string;
  cursor: string;
  events: { type: string; node_id?: string }[];
}

describe('flowmend serve wakes its long-polls at its own writes', () => {
  it("answers the events long-poll and the viewer's when the run moves on, without waiting for a poll", { timeout: 15_000 }, async () => {
    const gate = join(dir, 'gate');
    const workflow: WorkflowInput = {
      nodes: [
        { id: 'wait', type: 'shell', params: { command: `touch ${dir}/started; while [ ! -f ${gate} ]; do sleep 0.02; done; echo through` } },
        { id: 'after', type: 'transform', params: { expression: '$uppercase($)', input: '${wait.stdout}' } },
      ],
      edges: [{ from: 'wait', to: 'after' }],
    };
    const started = await request<{ run_id: string }>(api, 'POST', '/runs', { body: { workflow } });
    expect(started.status).toBe(202);
    const id = started.body.run_id;
    await waitForFile(join(dir, 'started'), 'the shell node to start');
    // Where the run is now: the events so far (wait=0 answers at once) and the viewer's change.
    const now = await request<Page>(api, 'GET', `/runs/${id}/events?wait=0`);
    expect(now.body.status).toBe('running');
    const view = await request<{ change: string }>(api, 'GET', `/runs/${id}/view`);
    // Both long-polls wait for what comes next; the gate lets the run go on once they are waiting.
    const events = request<Page>(api, 'GET', `/runs/${id}/events?wait=20&after=${encodeURIComponent(now.body.cursor)}`);
    const viewed = request<{ change: string; report: { status: string } }>(
      api,
      'GET',
      `/runs/${id}/view?wait_s=20&after=${encodeURIComponent(view.body.change)}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    writeFileSync(gate, '');
    const page = await events;
    expect(page.status).toBe(200);
    expect(page.body.events.length).toBeGreaterThan(0);
    expect(page.body.events.map((e) => e.node_id)).toContain('wait');
    const next = await viewed;
    expect(next.status).toBe(200);
    expect(next.body.change).not.toBe(view.body.change);
    // And on to the end, each answer woken by the run's next write.
    let cursor = page.body.cursor;
    for (let status = page.body.status; status === 'running'; ) {
      const more = await request<Page>(api, 'GET', `/runs/${id}/events?wait=20&after=${encodeURIComponent(cursor)}`);
      cursor = more.body.cursor;
      status = more.body.status;
    }
    const report = await request<{ status: string; result: Record<string, unknown> }>(api, 'GET', `/runs/${id}`);
    expect(report.body.status).toBe('succeeded');
  });
});
