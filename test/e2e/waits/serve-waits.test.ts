import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../../functions/core/ir.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../../support/serve-process.ts';

const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-11-01T00:00:00Z');

type Tick = { fired: unknown[]; woken: string[] };
const tick = (base: string, at: number) => request<Tick>(base, 'POST', '/_scheduler/tick', { body: { now: new Date(at).toISOString() } });

/** Reads the run until it is `waiting` (the events long-poll answers at once for a run that is not running). */
const untilWaiting = async (base: string, runId: string): Promise<Record<string, unknown>> => {
  for (let i = 0; i < 200; i += 1) {
    const report = await request<Record<string, unknown>>(base, 'GET', `/runs/${runId}`);
    if (report.body.status === 'waiting') return report.body;
    if (report.body.status !== 'running') throw new Error(`run ${runId} ended ${String(report.body.status)} instead of waiting`);
    await new Promise((done) => setTimeout(done, 50));
  }
  throw new Error(`run ${runId} never waited`);
};

const lines = (path: string): string[] => (existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : []);

describe('waits on flowmend serve (a manual clock: nothing sleeps)', () => {
  let dir: string;
  let stateDir: string;
  const serves: ServeProcess[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fm-serve-waits-'));
    stateDir = join(dir, 'state');
  });
  afterAll(async () => {
    await Promise.all(serves.map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  });
  const serve = async (): Promise<ServeProcess> => {
    const started = await startServe(stateDir);
    serves.push(started);
    return started;
  };
  /** A serve that is running (the last one started), for the tests that need no restart. */
  const running = async (): Promise<ServeProcess> => serves.filter((s) => s.process.child.exitCode === null).at(-1) ?? serve();

  it('a 30-day wait continues once its time comes, exactly once, after a restart and with two serves ticking', async () => {
    const log = join(dir, 'thirty.log');
    const workflow: WorkflowInput = {
      nodes: [
        { id: 'before', type: 'shell', params: { command: `echo before >> ${log}` } },
        { id: 'month', type: 'wait', params: { seconds: 30 * 86_400 } },
        { id: 'after', type: 'shell', params: { command: `echo after >> ${log}; echo done` } },
      ],
      edges: [
        { from: 'before', to: 'month' },
        { from: 'month', to: 'after' },
      ],
    };
    const first = await serve();
    await tick(first.url, T0);
    const started = await request<{ run_id: string }>(first.url, 'POST', '/runs', { body: { workflow } });
    const runId = started.body.run_id;
    // The tick set the clock to T0, which then runs on: the wait is due 30 days after the moment it began.
    const waiting = (await untilWaiting(first.url, runId)) as { waiting: { kind: string; node_id: string; until: string } };
    expect(waiting.waiting).toMatchObject({ kind: 'time', node_id: 'month', until: expect.stringMatching(/^2026-12-01T00:00:0/) });
    const due = Date.parse(waiting.waiting.until);
    const listed = await request<{ runs: { run_id: string; waiting?: unknown }[] }>(first.url, 'GET', '/runs?status=waiting');
    expect(listed.body.runs.find((r) => r.run_id === runId)?.waiting).toEqual({ kind: 'time', node_id: 'month', until: waiting.waiting.until });
    await first.stop();

    // The wait is in the store: serves started later find it, and the one that claims it first continues it.
    const [b, c] = await Promise.all([serve(), serve()]);
    expect((await tick(b.url, due - DAY_MS)).body.woken).toEqual([]);
    const [tb, tc] = await Promise.all([tick(b.url, due), tick(c.url, due)]);
    expect([...tb.body.woken, ...tc.body.woken]).toContain(runId);
    expect(await waitForRun(b.url, runId, 30_000, true)).toMatchObject({ status: 'succeeded', result: { stdout: 'done' } });
    await Promise.all([tick(b.url, due + DAY_MS), tick(c.url, due + DAY_MS)]);
    expect(lines(log)).toEqual(['before', 'after']);
    const events = await request<{ events: { type: string }[] }>(b.url, 'GET', `/runs/${runId}/events`);
    expect(events.body.events.filter((e) => e.type === 'run_woken')).toHaveLength(1);
  });

  it('takes an event on the callback URL an earlier node sent, once; a forged token, a reused one and a late one are refused', async () => {
    const served = await running();
    const api = served.url;
    const urlFile = join(dir, 'callback.url');
    const workflow: WorkflowInput = {
      nodes: [
        // The link goes out before the run waits for its answer, as an approval message would carry it.
        { id: 'send', type: 'shell', params: { command: `printf %s \${hook.callback_url} > ${urlFile}` } },
        { id: 'hook', type: 'wait-for-event', params: { timeout_s: 3600 } },
        { id: 'use', type: 'shell', params: { command: 'echo answer=${hook.payload.answer}' } },
      ],
      edges: [
        { from: 'send', to: 'hook' },
        { from: 'hook', to: 'use' },
      ],
      outputs: { said: { source: '${use.stdout}' } },
    };
    await tick(api, T0);
    const runId = (await request<{ run_id: string }>(api, 'POST', '/runs', { body: { workflow } })).body.run_id;
    expect(await untilWaiting(api, runId)).toMatchObject({ waiting: { kind: 'event', node_id: 'hook', until: expect.stringMatching(/^2026-11-01T01:00:0/) } });
    const callback = readFileSync(urlFile, 'utf8');
    expect(callback).toMatch(new RegExp(`^${api}/callbacks/${runId}/[A-Za-z0-9_-]{43}$`));
    const token = callback.slice(callback.lastIndexOf('/') + 1);
    // The token is nowhere in what the store gives back: the report, the events, the run list.
    const seen = JSON.stringify([
      (await request(api, 'GET', `/runs/${runId}`)).body,
      (await request(api, 'GET', `/runs/${runId}/events`)).body,
      (await request(api, 'GET', '/runs?status=waiting')).body,
    ]);
    expect(seen).not.toContain(token);

    const path = callback.slice(api.length);
    const forged = await request(api, 'POST', `${path.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`, { body: { answer: 1 } });
    expect(forged).toMatchObject({ status: 404, body: { error: { code: 'CALLBACK_NOT_OPEN' } } });
    const accepted = await request(api, 'POST', path, { body: { answer: 42 } });
    expect(accepted).toMatchObject({ status: 202, body: { accepted: true } });
    expect(await waitForRun(api, runId, 30_000, true)).toMatchObject({ status: 'succeeded', result: { said: 'answer=42' } });
    const reused = await request(api, 'POST', path, { body: { answer: 43 } });
    expect(reused.status).toBe(404);
    expect(reused.body).toEqual(forged.body);

    // A second run whose event never comes: at its timeout the node fails on its error action, and a late event is refused.
    const late = (await request<{ run_id: string }>(api, 'POST', '/runs', { body: { workflow } })).body.run_id;
    const timesOut = Date.parse(((await untilWaiting(api, late)) as { waiting: { until: string } }).waiting.until);
    const lateUrl = readFileSync(urlFile, 'utf8');
    expect((await tick(api, timesOut - 60_000)).body.woken).toEqual([]);
    expect((await tick(api, timesOut)).body.woken).toEqual([late]);
    expect(await waitForRun(api, late, 30_000, true)).toMatchObject({
      status: 'failed',
      errors: [{ node_id: 'hook', code: 'WAIT_TIMEOUT', category: 'non_repairable', fixable: false }],
    });
    expect((await request(api, 'POST', lateUrl.slice(api.length), { body: { answer: 1 } })).status).toBe(404);
    // Nor is it in what serve logged while it took, refused and timed out these callbacks.
    expect(served.log()).not.toContain(token);
    expect(served.log()).not.toContain(lateUrl.slice(lateUrl.lastIndexOf('/') + 1));
  });
});
