import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killStrayChildren, makeTempDir, REPO } from '../support/cli-process.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../support/serve-process.ts';

// pflow's .pflow.md over the API (issue 29): a markdown body by its content type, or as a string where JSON has the workflow.
const greet = readFileSync(join(REPO, 'test', 'fixtures', 'pflow-md', 'greet.pflow.md'), 'utf8');
const MARKDOWN = { 'content-type': 'text/markdown; charset=utf-8' };

let dir: string;
let serve: ServeProcess;
beforeAll(async () => {
  dir = makeTempDir('pflow-md-api');
  serve = await startServe(join(dir, 'state'));
});
afterAll(async () => {
  await serve?.stop('SIGKILL');
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

describe('flowmend serve with .pflow.md workflows', () => {
  it('PUT /workflows/{name} registers a markdown body (kept as its IR), and a run of it by name succeeds', async () => {
    const put = await request(serve.url, 'PUT', '/workflows/greet-md', { raw: greet, headers: MARKDOWN });
    expect(put.status, JSON.stringify(put.body)).toBe(201);
    const stored = await request<{ workflow: { nodes: { id: string }[] } }>(serve.url, 'GET', '/workflows/greet-md');
    expect(stored.body.workflow.nodes.map((n) => n.id)).toEqual(['greet', 'shout']);
    const started = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow_name: 'greet-md', params: { name: 'Ada' } } });
    expect(await waitForRun(serve.url, started.body.run_id)).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO ADA' } });
  });

  it('POST /runs takes a markdown body with its options in the query, or the markdown as the "workflow" string of a JSON body', async () => {
    const params = encodeURIComponent(JSON.stringify({ name: 'Bo' }));
    const byBody = await request<{ run_id: string; workflow: string }>(serve.url, 'POST', `/runs?name=greet-inline&params=${params}`, {
      raw: greet,
      headers: MARKDOWN,
    });
    expect(byBody.status, JSON.stringify(byBody.body)).toBe(202);
    expect(byBody.body.workflow).toBe('greet-inline');
    expect(await waitForRun(serve.url, byBody.body.run_id)).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO BO' } });
    const byField = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow: greet, params: { name: 'Cy' } } });
    expect(await waitForRun(serve.url, byField.body.run_id)).toMatchObject({ status: 'succeeded', result: { loud: 'HELLO CY' } });
  });

  it('answers a markdown that does not parse with a 422 whose issue has the line and column', async () => {
    const broken = await request<{ error: { code: string; message: string; details: { issues: { line: number; column: number }[] } } }>(
      serve.url,
      'PUT',
      '/workflows/broken-md',
      { raw: '## Steps\n\n### fetch\n\nFetch.\n\n- url: https://example.com\n', headers: MARKDOWN },
    );
    expect(broken.status).toBe(422);
    expect(broken.body.error).toMatchObject({ code: 'INVALID_WORKFLOW', message: expect.stringContaining("step 'fetch' has no type") });
    expect(broken.body.error.details.issues).toEqual([expect.objectContaining({ path: 'line 3, column 1', line: 3, column: 1 })]);
    const badQuery = await request(serve.url, 'POST', '/runs?params=not-json', { raw: greet, headers: MARKDOWN });
    expect(badQuery.status).toBe(400);
  });
});
