import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRegistryDatabase, SqliteRegistryStore } from '../../functions/adapters/sqlite-registry-store.ts';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { StartRunBodySchema } from '../../functions/hosts/api/api-schemas.ts';
import { bodyKey } from '../../functions/hosts/api/run-operations.ts';
import { runCli as runCliInProcess } from '../../functions/hosts/cli/commands.ts';
import { blockingCommand, countLines, killStrayChildren, makeTempDir, waitForFile, writeWorkflow } from '../support/cli-process.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../support/serve-process.ts';

const hello: WorkflowInput = {
  ir_version: '0.1.0',
  inputs: { name: { type: 'string', required: false, default: 'world' } },
  nodes: [
    { id: 'greet', type: 'shell', params: { command: 'echo hello ${name}' } },
    { id: 'shout', type: 'shell', params: { stdin: '${greet.stdout}', command: 'tr a-z A-Z' } },
  ],
  edges: [{ from: 'greet', to: 'shout', action: 'default' }],
  outputs: { loud: { source: '${shout.stdout}' } },
};

const failing: WorkflowInput = {
  ir_version: '0.1.0',
  nodes: [
    { id: 'first', type: 'shell', params: { command: 'echo one' } },
    { id: 'second', type: 'shell', params: { command: 'echo broken >&2; exit 3' } },
  ],
  edges: [{ from: 'first', to: 'second', action: 'default' }],
  outputs: { out: { source: '${second.stdout}' } },
};

let dir: string;
let serve: ServeProcess;
let api: string;
beforeAll(async () => {
  dir = makeTempDir('api-runs');
  mkdirSync(join(dir, 'ws'));
  serve = await startServe(join(dir, 'state'), 30_000, ['--workspace', join(dir, 'ws')]);
  api = serve.url;
});
afterAll(async () => {
  await serve?.stop();
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

interface Started {
  run_id: string;
  status: string;
  replayed: boolean;
  links: Record<string, string>;
}

describe('flowmend serve: runs over real HTTP', () => {
  it('starts an inline workflow with 202 and links, and reports it as the CLI does', async () => {
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow: hello, params: { name: 'Ada' } } });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ status: 'running', replayed: false, links: { self: `/runs/${started.body.run_id}` } });
    const report = await waitForRun(api, started.body.run_id);
    expect(report).toMatchObject({ success: true, status: 'succeeded', run_id: started.body.run_id, result: { loud: 'HELLO ADA' }, errors: [] });
    expect((report.steps as { node_id: string }[]).map((s) => s.node_id)).toEqual(['greet', 'shout']);
  });

  it("starts shell commands from its command helper, a process of its own, not from serve's thread", async () => {
    const workflow = {
      nodes: [{ id: 'parent', type: 'shell', params: { command: 'echo "$PPID"' } }],
      edges: [],
      outputs: { ppid: { source: '${parent.stdout}' } },
    };
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow } });
    const report = await waitForRun(api, started.body.run_id);
    expect(report).toMatchObject({ status: 'succeeded' });
    const parent = Number((report.result as { ppid: string }).ppid);
    expect(parent).not.toBe(serve.process.child.pid);
    expect(readFileSync(`/proc/${parent}/cmdline`, 'utf8')).toContain('command-helper.cjs');
    // The helper is serve's child.
    const stat = readFileSync(`/proc/${parent}/stat`, 'utf8');
    expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])).toBe(serve.process.child.pid);
  });

  it('runs file nodes in its --workspace (the local catalog), where the AWS API refuses them', async () => {
    const files: WorkflowInput = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'w', type: 'write-file', params: { file_path: 'out/note.txt', content: 'from the API\n' } },
        { id: 'r', type: 'read-file', params: { file_path: 'out/note.txt' } },
      ],
      edges: [{ from: 'w', to: 'r', action: 'default' }],
      outputs: { text: { source: '${r.content}' } },
    };
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow: files } });
    expect(started.status).toBe(202);
    const report = await waitForRun(api, started.body.run_id);
    expect(report).toMatchObject({ status: 'succeeded', result: { text: 'from the API\n' } });
    expect(readFileSync(join(dir, 'ws', 'out', 'note.txt'), 'utf8')).toBe('from the API\n');
    // A path out of the workspace is refused like in `flowmend run`.
    const outside = await request<Started>(api, 'POST', '/runs', {
      body: { workflow: { nodes: [{ id: 'r', type: 'read-file', params: { file_path: '../state/flowmend.db' } }] }, repair: false },
    });
    expect(await waitForRun(api, outside.body.run_id)).toMatchObject({
      status: 'failed',
      errors: [expect.objectContaining({ message: expect.stringMatching(/outside the workspace/) })],
    });
  });

  it('starts one run for 10 parallel POSTs with one Idempotency-Key', async () => {
    const key = `retry-${Date.now()}`;
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => request<Started>(api, 'POST', '/runs', { body: { workflow: hello }, headers: { 'Idempotency-Key': key } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(202));
    const ids = new Set(answers.map((a) => a.body.run_id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => !a.body.replayed)).toHaveLength(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(9);
    await waitForRun(api, [...ids][0] as string);
  });

  it('starts the run of an Idempotency-Key whose request died after claiming the key, once, on the next retry', async () => {
    // What a serve killed between the claim and the run's write leaves: a key naming a run that does not exist.
    const orphanRun = `20261123-000000-${Date.now().toString(16).slice(-8)}`;
    const sent = { workflow: hello, params: { name: 'Key' } };
    const db = openRegistryDatabase(join(dir, 'state'));
    try {
      const now = Date.now();
      const registry = new SqliteRegistryStore(db);
      // Both claims the request makes: its body's, then the key's.
      for (const key of [bodyKey('died-after-claim', StartRunBodySchema.parse(sent)), 'died-after-claim']) {
        const claim = await registry.claimIdempotencyKey({ key, runId: orphanRun, createdAt: now, expiresAt: now + 3_600_000 }, now);
        expect(claim.claimed).toBe(true);
      }
    } finally {
      db.close();
    }
    const retries = await Promise.all(
      Array.from({ length: 3 }, () => request<Started>(api, 'POST', '/runs', { body: sent, headers: { 'Idempotency-Key': 'died-after-claim' } })),
    );
    expect(retries.map((r) => [r.status, r.body.run_id, r.body.replayed])).toEqual(Array(3).fill([202, orphanRun, true]));
    const report = await waitForRun(api, orphanRun);
    expect(report).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO KEY' } });
    // One run, run once: its greet node has one step.
    expect((report.steps as { node_id: string }[]).map((s) => s.node_id)).toEqual(['greet', 'shout']);
    const again = await request<Started>(api, 'POST', '/runs', { body: sent, headers: { 'Idempotency-Key': 'died-after-claim' } });
    expect([again.body.run_id, again.body.replayed]).toEqual([orphanRun, true]);
    // The same key with another body is another request: refused, naming the key's run (issue 27).
    const other = await request<{ error: { code: string; message: string } }>(api, 'POST', '/runs', {
      body: { workflow: hello },
      headers: { 'Idempotency-Key': 'died-after-claim' },
    });
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', message: expect.stringContaining(orphanRun) });
  });

  it('answers bad requests with the error shape, the right 4xx and no stack', async () => {
    const cases: [string, string, { body?: unknown; raw?: string; headers?: Record<string, string> }, number, string][] = [
      ['POST', '/runs', { raw: '{not json' }, 400, 'INVALID_JSON'],
      ['POST', '/runs', { body: { workflow: hello, workflow_name: 'x' } }, 400, 'INVALID_REQUEST'],
      ['POST', '/runs', { body: { workflow: hello, surprise: 1 } }, 400, 'INVALID_REQUEST'],
      ['POST', '/runs', { body: { workflow: hello, max_repairs: -1 } }, 400, 'INVALID_REQUEST'],
      ['POST', '/runs', { body: { workflow: hello }, headers: { 'Idempotency-Key': 'has space' } }, 400, 'INVALID_REQUEST'],
      [
        'POST',
        '/runs',
        { body: { workflow: { ir_version: '0.1.0', nodes: [{ id: 'a', type: 'nope', params: {} }] }, repair: false } },
        422,
        'INVALID_WORKFLOW',
      ],
      ['POST', '/runs', { body: { workflow: { ...hello, inputs: { name: { type: 'string', required: true } } } } }, 422, 'INVALID_WORKFLOW'],
      ['POST', '/runs', { body: { workflow_name: 'never-registered' } }, 404, 'NOT_FOUND'],
      ['GET', '/runs/not!an!id', {}, 400, 'INVALID_REQUEST'],
      ['GET', '/runs/nosuchrun-123', {}, 404, 'NOT_FOUND'],
      ['GET', '/runs?limit=1000', {}, 400, 'INVALID_REQUEST'],
      ['GET', '/runs?status=sleeping', {}, 400, 'INVALID_REQUEST'],
      ['GET', '/runs?cursor=garbage', {}, 400, 'INVALID_REQUEST'],
      ['GET', '/runs/nosuchrun-123/events?after=x', {}, 400, 'INVALID_REQUEST'],
      ['POST', '/runs/nosuchrun-123/cancel', {}, 404, 'NOT_FOUND'],
      ['POST', '/runs/nosuchrun-123/resume', { body: { repair: 'yes' } }, 400, 'INVALID_REQUEST'],
      ['DELETE', '/nowhere', {}, 404, 'NOT_FOUND'],
    ];
    for (const [method, path, options, status, code] of cases) {
      const answer = await request<{ error: { code: string; message: string; details: unknown } }>(api, method, path, options);
      expect({ method, path, status: answer.status, code: answer.body.error.code }).toEqual({ method, path, status, code });
      expect(answer.body.error.message).not.toMatch(/\bat .*\.ts:\d+/);
      expect(answer.body.error.details).toBeTypeOf('object');
    }
    const invalid = await request<{ error: { message: string; details: { issues: { path: string[] }[] } } }>(api, 'POST', '/runs', {
      body: { workflow: hello, max_repairs: 'three' },
    });
    expect(invalid.body.error.details.issues[0]?.path).toEqual(['max_repairs']);
  });

  it('refuses a body over the limit with 413', async () => {
    const big = await request<{ error: { code: string } }>(api, 'POST', '/runs', {
      raw: JSON.stringify({ workflow: hello, params: { name: 'x'.repeat(1_100_000) } }),
      headers: { connection: 'close' },
    });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses a state-changing request from another origin (a page in the browser), and a foreign Host, but not the CLI or its own page', async () => {
    const before = (await request<{ runs: unknown[] }>(api, 'GET', '/runs?limit=100')).body.runs.length;
    const pages: Record<string, string>[] = [
      { Origin: 'http://evil.example' },
      { Origin: 'null' },
      { 'Sec-Fetch-Site': 'cross-site' },
      { 'Sec-Fetch-Site': 'same-site', Origin: api },
    ];
    for (const headers of pages) {
      for (const [method, path] of [
        ['POST', '/runs'],
        ['PUT', '/workflows/csrf'],
        ['POST', '/runs/nosuchrun-123/cancel'],
        ['DELETE', '/workflows/csrf'],
      ] as const) {
        const answer = await request<{ error: { code: string; message: string } }>(api, method, path, { body: { workflow: hello }, headers });
        expect({ method, path, headers, status: answer.status, code: answer.body.error.code }).toEqual({
          method,
          path,
          headers,
          status: 403,
          code: 'FORBIDDEN',
        });
      }
    }
    // A form post needs no preflight: the one a hostile page can really send.
    const form = await fetch(`${api}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', origin: 'https://evil.example' },
      body: JSON.stringify({ workflow: hello }),
    });
    expect(form.status).toBe(403);
    expect((await request<{ runs: unknown[] }>(api, 'GET', '/runs?limit=100')).body.runs.length).toBe(before);
    // Reading stays open to other origins' GETs; the browser's same-origin policy keeps the answer from them.
    expect((await request(api, 'GET', '/runs?limit=1', { headers: { Origin: 'http://evil.example' } })).status).toBe(200);
    // A DNS-rebinding page reaches 127.0.0.1 under its own name, so its Origin matches its Host: the Host gives it away.
    const port = new URL(api).port;
    const rebound = await new Promise<number>((done, fail) =>
      httpRequest({ host: '127.0.0.1', port, path: '/runs', headers: { host: `evil.example:${port}` } }, (res) => {
        res.resume();
        done(res.statusCode ?? 0);
      })
        .on('error', fail)
        .end(),
    );
    expect(rebound).toBe(403);
    // Its own page (same origin, as a browser sends it) and clients that are no browser at all go through.
    const own = await request<Started>(api, 'POST', '/runs', { body: { workflow: hello }, headers: { Origin: api, 'Sec-Fetch-Site': 'same-origin' } });
    expect(own.status).toBe(202);
    const cli = await request<Started>(api, 'POST', '/runs', { body: { workflow: hello } });
    expect(cli.status).toBe(202);
    await Promise.all([waitForRun(api, own.body.run_id), waitForRun(api, cli.body.run_id)]);
  });

  it('pages through runs newest first with a cursor, filtered by workflow and status', async () => {
    const put = await request(api, 'PUT', '/workflows/paged', { body: hello });
    expect(put.status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      const started = await request<Started>(api, 'POST', '/runs', { body: { workflow_name: 'paged', params: { name: `n${i}` } } });
      ids.push(started.body.run_id);
      await waitForRun(api, started.body.run_id);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page += 1) {
      const answer = await request<{ runs: { run_id: string; workflow_version: number; status: string }[]; next_cursor?: string }>(
        api,
        'GET',
        `/runs?workflow=paged&status=succeeded&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
      );
      expect(answer.status).toBe(200);
      expect(answer.body.runs.length).toBeLessThanOrEqual(2);
      for (const r of answer.body.runs) expect(r).toMatchObject({ workflow_version: 1, status: 'succeeded' });
      seen.push(...answer.body.runs.map((r) => r.run_id));
      cursor = answer.body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toEqual([...ids].reverse());
    const none = await request<{ runs: unknown[] }>(api, 'GET', '/runs?workflow=paged&status=failed');
    expect(none.body.runs).toEqual([]);
  });

  it('lists top-level runs with their child runs counted; ?include=children (and runs --all over --api) lists the children too', async () => {
    const nested: WorkflowInput = {
      nodes: [{ id: 'sub', type: 'workflow', params: { workflow_ir: hello, param_mapping: { name: 'Kid' }, output_mapping: { loud: 'loud' } } }],
      outputs: { loud: { source: '${sub.loud}' } },
    };
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow: nested } });
    expect(await waitForRun(api, started.body.run_id)).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO KID' } });
    type Row = { run_id: string; children: number; parent_run_id?: string };
    const top = (await request<{ runs: Row[] }>(api, 'GET', '/runs?limit=100')).body.runs;
    expect(top.find((r) => r.run_id === started.body.run_id)).toMatchObject({ children: 1 });
    expect(top.filter((r) => r.parent_run_id !== undefined)).toEqual([]);
    const all = (await request<{ runs: Row[] }>(api, 'GET', '/runs?limit=100&include=children')).body.runs;
    const child = all.find((r) => r.parent_run_id === started.body.run_id);
    expect(child).toMatchObject({ children: 0 });
    expect(all).toHaveLength(top.length + 1);
    const bad = await request<{ error: { code: string; message: string } }>(api, 'GET', '/runs?include=everything');
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('include');
    let stdout = '';
    await runCliInProcess(['runs', '--all', '--api', api, '--output-format', 'json', '--state-dir', join(dir, 'state')], {
      stdout: (t) => (stdout += t),
      stderr: () => {},
      env: {},
    });
    expect((JSON.parse(stdout) as { runs: Row[] }).runs).toContainEqual(expect.objectContaining({ run_id: child?.run_id, parent_run_id: started.body.run_id }));
  });

  it("pages through a run's progress events with the after cursor", async () => {
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow: hello } });
    await waitForRun(api, started.body.run_id);
    const all = await request<{ events: { type: string; node_id?: string }[] }>(api, 'GET', `/runs/${started.body.run_id}/events`);
    expect(all.body.events.map((e) => `${e.type}${e.node_id ? `:${e.node_id}` : ''}`)).toEqual([
      'run_started',
      'node_completed:greet',
      'node_completed:shout',
      'run_succeeded',
    ]);
    const paged: unknown[] = [];
    let after = '';
    for (let i = 0; i < 10; i += 1) {
      const page = await request<{ events: unknown[]; cursor: string; more: boolean }>(
        api,
        'GET',
        `/runs/${started.body.run_id}/events?limit=1${after ? `&after=${after}` : ''}`,
      );
      paged.push(...page.body.events);
      after = page.body.cursor;
      if (!page.body.more) break;
    }
    expect(paged).toEqual(all.body.events);
  });

  it('resumes a failed run with a patched workflow, replaying what completed', async () => {
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow: failing, repair: false } });
    const failed = await waitForRun(api, started.body.run_id);
    expect(failed).toMatchObject({ status: 'failed', success: false });
    const badPatch = await request<{ error: { code: string } }>(api, 'POST', `/runs/${started.body.run_id}/resume`, {
      body: { workflow: { ...failing, nodes: [{ id: 'first', type: 'shell', params: { command: 'echo changed' } }, failing.nodes[1]] } },
    });
    expect(badPatch.status).toBe(422);
    expect(badPatch.body.error.code).toBe('INVALID_PATCH');
    const patched = { ...failing, nodes: [failing.nodes[0], { id: 'second', type: 'shell', params: { command: 'echo fixed' } }] };
    const resumed = await request<{ status: string; workflow_version: number }>(api, 'POST', `/runs/${started.body.run_id}/resume`, {
      body: { workflow: patched },
    });
    expect(resumed.status).toBe(202);
    expect(resumed.body.workflow_version).toBe(1);
    const report = await waitForRun(api, started.body.run_id);
    expect(report).toMatchObject({ status: 'succeeded', result: { out: 'fixed' }, repairs: [{ source: 'manual', nodes_changed: ['second'] }] });
    expect((report.steps as { node_id: string; cached: boolean }[]).filter((s) => s.cached).map((s) => s.node_id)).toEqual(['first']);
    const again = await request<{ error: { code: string } }>(api, 'POST', `/runs/${started.body.run_id}/resume`);
    expect(again.status).toBe(409);
  });

  it('cancels a live run: the command in flight is killed, nothing moves the run on, and a resume runs it again', async () => {
    const slow: WorkflowInput = {
      ir_version: '0.1.0',
      nodes: [
        // Counts after the go file only: a command the cancel killed never counts.
        { id: 'slow', type: 'shell', params: { command: blockingCommand(dir, 'slow', { countFirst: false }) } },
        { id: 'after', type: 'shell', params: { command: `echo ran >> ${dir}/after.count` } },
      ],
      edges: [{ from: 'slow', to: 'after', action: 'default' }],
    };
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow: slow } });
    await waitForFile(join(dir, 'slow.started'), 'the slow node to start');
    const cancelled = await request<{ status: string; interrupted_node: string }>(api, 'POST', `/runs/${started.body.run_id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', interrupted_node: 'slow', node_outcome: 'stopped' });
    // The command's group is gone: the go file now reaches no copy of it.
    writeFileSync(join(dir, 'go'), '');
    const report = (await request(api, 'GET', `/runs/${started.body.run_id}`)).body;
    expect(report).toMatchObject({ status: 'cancelled', success: false, errors: [{ code: 'CANCELLED', node_id: 'slow' }] });
    expect(report.steps).toEqual([expect.objectContaining({ node_id: 'slow', status: 'interrupted' })]);
    expect(existsSync(join(dir, 'slow.count'))).toBe(false);
    expect(existsSync(join(dir, 'after.count'))).toBe(false);
    const twice = await request<{ already_cancelled: boolean }>(api, 'POST', `/runs/${started.body.run_id}/cancel`);
    expect(twice.body.already_cancelled).toBe(true);
    const resumed = await request(api, 'POST', `/runs/${started.body.run_id}/resume`);
    expect(resumed.status).toBe(202);
    expect(await waitForRun(api, started.body.run_id)).toMatchObject({ status: 'succeeded' });
    expect(countLines(join(dir, 'slow.count'))).toBe(1);
  });

  it('gives the same report through the remote CLI as a local run of the same workflow', async () => {
    const path = writeWorkflow(dir, 'hello', hello);
    // The CLI's own code in this process; --api makes it talk HTTP to the serve child, without it the same state dir locally.
    const cli = async (argv: string[]) => {
      let stdout = '';
      const code = await runCliInProcess([...argv, '--state-dir', join(dir, 'state')], { stdout: (t) => (stdout += t), stderr: () => {}, env: {} });
      return { code, stdout };
    };
    const local = await cli(['run', path, 'name=Eve', '--output-format', 'json']);
    const remote = await cli(['run', path, 'name=Eve', '--output-format', 'json', '--api', api]);
    expect([local.code, remote.code]).toEqual([0, 0]);
    const normalise = (text: string) => JSON.parse(text, (k, v: unknown) => (k === 'run_id' ? 'ID' : k === 'duration_ms' ? 0 : v)) as unknown;
    expect(normalise(remote.stdout)).toEqual(normalise(local.stdout));
    const lines = (text: string) => text.replace(/\d+\.\d+s/g, 'Ts').replace(/Run: \S+/, 'Run: ID');
    const remoteText = await cli(['run', path, 'name=Eve', '--api', api]);
    const localText = await cli(['run', path, 'name=Eve']);
    expect(lines(remoteText.stdout)).toBe(lines(localText.stdout));
    const failedRemote = await cli(['run', writeWorkflow(dir, 'failing', failing), '--no-repair', '--api', api]);
    expect(failedRemote.code).toBe(1);
    const runId = /Run: (\S+)/.exec(failedRemote.stdout)?.[1] as string;
    const logs = await cli(['logs', runId, '--api', api]);
    expect(logs.stdout).toMatch(/Executing workflow \(2 nodes\):\n {2}first\.\.\. ✓ \d+\.\ds\n {2}second\.\.\. ✗ /);
    expect((await cli(['logs', runId])).stdout).toBe(logs.stdout);
    const status = await cli(['status', 'nosuchrun-1', '--api', api, '--output-format', 'json']);
    expect(status.code).toBe(2);
    expect(JSON.parse(status.stdout)).toMatchObject({ success: false, code: 'NOT_FOUND' });
  });

  it('answers a report whose result is over what a Lambda may answer (6 MB) without the result, which its own route gives when it fits', async () => {
    const big: WorkflowInput = {
      ir_version: '0.1.0',
      nodes: [{ id: 'fill', type: 'shell', params: { command: "head -c 5500000 /dev/zero | tr '\\0' a" } }],
      outputs: { text: { source: '${fill.stdout}' }, head: { source: 'small' } },
    };
    const started = await request<Started>(api, 'POST', '/runs', { body: { workflow: big } });
    await waitForRun(api, started.body.run_id);
    const report = await request<{ status: string; result?: unknown; result_omitted?: { bytes: number; link: string } }>(
      api,
      'GET',
      `/runs/${started.body.run_id}`,
    );
    expect(report.body.status).toBe('succeeded');
    expect(report.body.result).toBeUndefined();
    expect(report.body.result_omitted).toEqual({ bytes: expect.any(Number), link: `/runs/${started.body.run_id}/result` });
    expect(report.body.result_omitted?.bytes).toBeGreaterThan(5_500_000);
    const result = await request<{ error: { code: string; message: string } }>(api, 'GET', `/runs/${started.body.run_id}/result`);
    expect(result.status).toBe(413);
    expect(result.body.error).toMatchObject({ code: 'RESULT_TOO_LARGE', message: expect.stringContaining('bytes') });
    const small = await request<Started>(api, 'POST', '/runs', { body: { workflow: hello } });
    await waitForRun(api, small.body.run_id);
    expect((await request(api, 'GET', `/runs/${small.body.run_id}/result`)).body).toMatchObject({ result: { loud: 'HELLO WORLD' } });
  });
});
