import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { blockingCommand, countLines, killShellGroup, killStrayChildren, makeTempDir, waitForFile } from '../support/cli-process.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../support/serve-process.ts';

const echo = (text: string): WorkflowInput => ({
  ir_version: '0.1.0',
  description: `says ${text}`,
  inputs: { who: { type: 'string', required: false, default: 'world' } },
  nodes: [{ id: 'say', type: 'shell', params: { command: `echo ${text} \${who}` } }],
  outputs: { said: { source: '${say.stdout}' } },
});

let dir: string;
let stateDir: string;
let serve: ServeProcess;
let api: string;
const others: ServeProcess[] = [];
beforeAll(async () => {
  dir = makeTempDir('api-registry');
  stateDir = join(dir, 'state');
  serve = await startServe(stateDir);
  api = serve.url;
});
afterAll(async () => {
  for (const s of [serve, ...others]) await s?.stop('SIGKILL');
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

describe('flowmend serve: workflows and schedules over real HTTP', () => {
  it('keeps every PUT of a workflow as a new immutable version, and runs record the version they used', async () => {
    expect((await request(api, 'PUT', '/workflows/greeter', { body: echo('hi') })).body).toMatchObject({ name: 'greeter', version: 1 });
    expect((await request(api, 'PUT', '/workflows/greeter', { body: echo('hello') })).body).toMatchObject({ version: 2 });
    expect((await request<{ version: number; workflow: WorkflowInput }>(api, 'GET', '/workflows/greeter')).body).toMatchObject({
      version: 2,
      workflow: { description: 'says hello' },
    });
    expect((await request(api, 'GET', '/workflows/greeter?version=1')).body).toMatchObject({ version: 1, workflow: { description: 'says hi' } });
    const listed = await request<{ workflows: { name: string; latest_version: number }[] }>(api, 'GET', '/workflows');
    expect(listed.body.workflows).toContainEqual(expect.objectContaining({ name: 'greeter', latest_version: 2, description: 'says hello' }));
    const started = await request<{ run_id: string; workflow_version: number }>(api, 'POST', '/runs', {
      body: { workflow_name: 'greeter', version: 1, params: { who: 'Ada' } },
    });
    expect(started.body.workflow_version).toBe(1);
    expect(await waitForRun(api, started.body.run_id)).toMatchObject({
      status: 'succeeded',
      workflow: 'greeter',
      workflow_version: 1,
      result: { said: 'hi Ada' },
    });
  });

  it('validates on PUT and answers the error shape', async () => {
    const invalid = await request<{ error: { code: string; details: { issues: { code: string }[] } } }>(api, 'PUT', '/workflows/broken', {
      body: { ir_version: '0.1.0', nodes: [{ id: 'a', type: 'shell', params: { command: 'echo ${nowhere.stdout}' } }] },
    });
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.code).toBe('INVALID_WORKFLOW');
    expect(invalid.body.error.details.issues.length).toBeGreaterThan(0);
    expect((await request(api, 'PUT', '/workflows/bad name!', { body: echo('x') })).status).toBe(400);
    expect((await request(api, 'GET', '/workflows/broken')).status).toBe(404);
    expect((await request(api, 'GET', '/workflows/greeter?version=0')).status).toBe(400);
    await request(api, 'PUT', '/workflows/doomed', { body: echo('bye') });
    expect((await request(api, 'DELETE', '/workflows/doomed')).status).toBe(204);
    expect((await request(api, 'DELETE', '/workflows/doomed')).status).toBe(404);
    expect((await request(api, 'GET', '/workflows/doomed')).status).toBe(404);
  });

  it('stores a schedule in EventBridge syntax, shows its next fire times and refuses bad ones', async () => {
    await request(api, 'PUT', '/workflows/weekday', { body: echo('morning') });
    const bad: [unknown, number, string][] = [
      [{ expression: 'every 5 minutes' }, 422, 'INVALID_SCHEDULE'],
      [{ expression: 'cron(0 9 * * * *)' }, 422, 'INVALID_SCHEDULE'],
      [{ expression: 'rate(5 fortnights)' }, 422, 'INVALID_SCHEDULE'],
      [{ expression: 'rate(5 minutes)', timezone: 'Mars/Olympus' }, 422, 'INVALID_SCHEDULE'],
      [{ expression: 'rate(5 minutes)', params: { nobody: 1, who: 3 }, enabled: 'yes' }, 400, 'INVALID_REQUEST'],
    ];
    for (const [body, status, code] of bad) {
      const answer = await request<{ error: { code: string } }>(api, 'PUT', '/workflows/weekday/schedule', { body });
      expect({ body, status: answer.status, code: answer.body.error.code }).toEqual({ body, status, code });
    }
    expect((await request(api, 'PUT', '/workflows/nowhere/schedule', { body: { expression: 'rate(1 hour)' } })).status).toBe(404);
    const put = await request<{ next_fire_times: string[] }>(api, 'PUT', '/workflows/weekday/schedule', {
      body: { expression: 'cron(30 9 ? * MON-FRI *)', timezone: 'Europe/Paris', params: { who: 'team' } },
    });
    expect(put.status).toBe(201);
    expect(put.body.next_fire_times).toHaveLength(5);
    for (const at of put.body.next_fire_times) {
      const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', weekday: 'short', hour: '2-digit', minute: '2-digit' }).format(new Date(at));
      expect(local).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 09:30$/);
    }
    const off = await request<{ enabled: boolean; next_fire_times: string[] }>(api, 'PUT', '/workflows/weekday/schedule', {
      body: { expression: 'rate(1 hour)', enabled: false },
    });
    expect(off.status).toBe(200);
    expect((await request(api, 'GET', '/workflows/weekday/schedule')).body).toMatchObject({ expression: 'rate(1 hour)', enabled: false, next_fire_times: [] });
    expect((await request(api, 'DELETE', '/workflows/weekday/schedule')).status).toBe(204);
    expect((await request(api, 'GET', '/workflows/weekday/schedule')).status).toBe(404);
  });

  it('fires a schedule exactly once per tick of its clock, even with two serve processes on one state dir', async () => {
    await request(api, 'PUT', '/workflows/ticker', { body: echo('tick') });
    const put = await request<{ updated_at: string }>(api, 'PUT', '/workflows/ticker/schedule', {
      body: { expression: 'rate(1 minute)', params: { who: 'clock' } },
    });
    const setAt = Date.parse(put.body.updated_at);
    const second = await startServe(stateDir);
    others.push(second);
    type Tick = { fired: { workflowName: string; scheduledAt: string; runId: string; replayed: boolean }[] };
    const tick = (base: string, at: number) => request<Tick>(base, 'POST', '/_scheduler/tick', { body: { now: new Date(at).toISOString() } });
    const [a, b] = await Promise.all([tick(api, setAt + 60_500), tick(second.url, setAt + 60_500)]);
    const fires = [...a.body.fired, ...b.body.fired].filter((f) => f.workflowName === 'ticker');
    expect(fires).toHaveLength(2);
    expect(new Set(fires.map((f) => f.runId)).size).toBe(1);
    expect(fires.filter((f) => !f.replayed)).toHaveLength(1);
    expect(fires[0]?.scheduledAt).toBe(new Date(setAt + 60_000).toISOString());
    expect((await tick(api, setAt + 60_500)).body.fired).toEqual([]);
    const next = (await tick(api, setAt + 121_000)).body.fired.filter((f) => f.workflowName === 'ticker');
    expect(next.map((f) => f.scheduledAt)).toEqual([new Date(setAt + 120_000).toISOString()]);
    for (const f of [fires[0], next[0]])
      expect(await waitForRun(api, f?.runId as string)).toMatchObject({ status: 'succeeded', result: { said: 'tick clock' } });
    const runs = await request<{ runs: unknown[] }>(api, 'GET', '/runs?workflow=ticker');
    expect(runs.body.runs).toHaveLength(2);
  });

  it('resumes its own interrupted runs when it starts again after a crash', async () => {
    const slow: WorkflowInput = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'slow', type: 'shell', params: { command: blockingCommand(dir, 'slow', { countFirst: true }) } },
        { id: 'after', type: 'shell', params: { command: 'echo after' } },
      ],
      edges: [{ from: 'slow', to: 'after', action: 'default' }],
      outputs: { last: { source: '${after.stdout}' } },
    };
    const started = await request<{ run_id: string }>(api, 'POST', '/runs', { body: { workflow: slow } });
    await waitForFile(join(dir, 'slow.started'), 'the slow node to start');
    await serve.stop('SIGKILL');
    killShellGroup(join(dir, 'slow.pid'));
    rmSync(join(dir, 'slow.started'));
    serve = await startServe(stateDir);
    api = serve.url;
    await waitForFile(join(dir, 'slow.started'), 'the restarted serve to run the slow node again');
    writeFileSync(join(dir, 'go'), '');
    const report = await waitForRun(api, started.body.run_id);
    expect(report).toMatchObject({ status: 'succeeded', result: { last: 'after' } });
    expect(countLines(join(dir, 'slow.count'))).toBe(2);
    expect(serve.log()).toContain(`resumed run ${started.body.run_id}`);
  });
});
