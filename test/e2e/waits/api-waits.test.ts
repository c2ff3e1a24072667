import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../../functions/core/ir.ts';
import { runCli } from '../../../functions/hosts/cli/commands.ts';
import { countLines, makeTempDir, writeWorkflow } from '../../support/cli-process.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../../support/serve-process.ts';

type Report = {
  run_id: string;
  status: string;
  result?: Record<string, unknown>;
  errors: { code: string; node_id?: string; message: string }[];
  waiting?: { kind: string; node_id?: string; wait_id: string; until?: string; repair?: { source: string } };
};
type Events = { events: { type: string; node_id?: string; message?: string }[] };

const T0 = Date.parse('2026-11-01T00:00:00Z');
const DAY_MS = 86_400_000;

describe('waiting runs through the API of flowmend serve, and the CLI with --api', () => {
  let dir: string;
  let serve: ServeProcess;
  let api: string;
  beforeAll(async () => {
    dir = makeTempDir('api-waits');
    serve = await startServe(join(dir, 'state'));
    api = serve.url;
    await request(api, 'POST', '/_scheduler/tick', { body: { now: new Date(T0).toISOString() } });
  });
  afterAll(async () => {
    await serve?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The CLI's own code in this process, talking HTTP to serve. */
  const cli = async <T = Report>(argv: string[]): Promise<{ code: number; json: T }> => {
    let stdout = '';
    const code = await runCli([...argv, '--api', api, '--output-format', 'json', '--state-dir', join(dir, 'cli-state')], {
      stdout: (t) => (stdout += t),
      stderr: () => {},
      env: {},
    });
    return { code, json: JSON.parse(stdout) as T };
  };
  const events = async (runId: string) => (await request<Events>(api, 'GET', `/runs/${runId}/events`)).body.events;
  const report = async (runId: string) => (await request<Report>(api, 'GET', `/runs/${runId}`)).body;
  const start = async (body: Record<string, unknown>) => request<{ run_id: string; error?: { code: string; message: string } }>(api, 'POST', '/runs', { body });
  /** Reads the run until it stops `running` (the long-poll of waitForRun answers at once for a waiting run). */
  const settled = async (runId: string): Promise<Report> => (await waitForRun(api, runId)) as Report;

  const gated = (name: string): WorkflowInput => ({
    nodes: [
      { id: 'draft', type: 'shell', params: { command: 'echo v2' } },
      { id: 'send', type: 'shell', approval: 'required', params: { command: `echo \${draft.stdout} >> ${join(dir, `${name}.sent`)}; echo sent` } },
    ],
    edges: [{ from: 'draft', to: 'send' }],
  });

  it('run --api pauses at a gate (exit 4), runs --status waiting lists it, approve --api --deny stops it (exit 3), with an event for each step', async () => {
    const paused = await cli(['run', writeWorkflow(dir, 'gated', gated('remote'))]);
    expect(paused.code).toBe(4);
    expect(paused.json).toMatchObject({ status: 'waiting', waiting: { kind: 'approval', node_id: 'send' } });
    const runId = paused.json.run_id;
    const listed = await cli<{ runs: { run_id: string; waiting?: unknown }[] }>(['runs', '--status', 'waiting']);
    expect(listed.json.runs.map((r) => r.run_id)).toContain(runId);

    const denied = await cli(['approve', runId, '--deny', '--comment', 'not on a Friday']);
    expect(denied.code).toBe(3);
    expect(denied.json).toMatchObject({ status: 'failed', errors: [{ code: 'DENIED', node_id: 'send' }] });
    expect(countLines(join(dir, 'remote.sent'))).toBe(0);
    const types = (await events(runId)).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['run_waiting', 'wait_answered', 'run_woken']));
    expect(types.indexOf('run_waiting')).toBeLessThan(types.indexOf('wait_answered'));
    expect(types.indexOf('wait_answered')).toBeLessThan(types.indexOf('run_woken'));
    expect((await events(runId)).find((e) => e.type === 'wait_answered')?.message).toMatch(/^denied by .+: not on a Friday$/);
    // Answered once: approving afterwards is refused, and nothing runs.
    expect((await request(api, 'POST', `/runs/${runId}/approve`, { body: {} })).status).toBe(409);
    expect(countLines(join(dir, 'remote.sent'))).toBe(0);
  });

  it('takes auto_approve and repair_approval in POST /runs; an answer for another wait is refused (409), approve --api applies the held repair', async () => {
    const pre = await start({ workflow: gated('pre'), auto_approve: ['send'] });
    expect(await settled(pre.body.run_id)).toMatchObject({ status: 'succeeded', result: { stdout: 'sent' } });
    expect((await events(pre.body.run_id)).some((e) => e.type === 'run_waiting')).toBe(false);
    const typo = await start({ workflow: gated('pre'), auto_approve: ['sned'] });
    expect(typo.status).toBe(422);
    expect(typo.body.error?.message).toContain("'sned'");

    // A typo the rules repair: with repair_approval "all", even a rule's fix waits for a person.
    const workflow: WorkflowInput = {
      nodes: [
        { id: 'fetch', type: 'shell', params: { command: 'echo octocat' } },
        { id: 'use', type: 'shell', params: { command: 'echo ${fetch.stdot}' } },
      ],
      edges: [{ from: 'fetch', to: 'use' }],
    };
    const held = await start({ workflow, repair_approval: 'all' });
    const runId = held.body.run_id;
    expect(await settled(runId)).toMatchObject({ status: 'waiting', waiting: { kind: 'repair-approval', repair: { source: 'rules' } } });
    const stale = await request<{ error: { code: string } }>(api, 'POST', `/runs/${runId}/approve`, { body: { wait_id: 'w000000000000' } });
    expect([stale.status, stale.body.error.code]).toEqual([409, 'WAIT_NOT_OPEN']);
    expect((await report(runId)).status).toBe('waiting');
    const applied = await cli(['approve', runId]);
    expect(applied.code).toBe(0);
    expect(applied.json).toMatchObject({ status: 'succeeded', result: { stdout: 'octocat' } });
  });

  it('cancels a waiting run: its wake-up and a late approval find it cancelled, and nothing after the wait runs', async () => {
    const after = join(dir, 'cancelled.after');
    const workflow: WorkflowInput = {
      nodes: [
        { id: 'day', type: 'wait', params: { seconds: 86_400 } },
        { id: 'after', type: 'shell', params: { command: `echo ran >> ${after}` } },
      ],
      edges: [{ from: 'day', to: 'after' }],
    };
    const timed = (await start({ workflow })).body.run_id;
    expect(await settled(timed)).toMatchObject({ status: 'waiting', waiting: { kind: 'time' } });
    const cancelled = await cli(['cancel', timed]);
    expect(cancelled.code).toBe(0);
    expect((await report(timed)).status).toBe('cancelled');
    const woken = await request<{ woken: string[] }>(api, 'POST', '/_scheduler/tick', { body: { now: new Date(T0 + 2 * DAY_MS).toISOString() } });
    expect(woken.body.woken).not.toContain(timed);
    expect(await report(timed)).toMatchObject({ status: 'cancelled' });
    expect(countLines(after)).toBe(0);
    expect((await request<Report>(api, 'GET', '/runs?status=waiting')).body).not.toMatchObject({ runs: [expect.objectContaining({ run_id: timed })] });

    const gate = (await start({ workflow: gated('cancelled-gate') })).body.run_id;
    expect(await settled(gate)).toMatchObject({ status: 'waiting' });
    expect((await request(api, 'POST', `/runs/${gate}/cancel`, { body: {} })).status).toBe(200);
    expect((await request<{ error: { code: string } }>(api, 'POST', `/runs/${gate}/approve`, { body: {} })).body.error.code).toBe('WAIT_NOT_OPEN');
    expect(countLines(join(dir, 'cancelled-gate.sent'))).toBe(0);
  });
});
