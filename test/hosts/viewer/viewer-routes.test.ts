import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { createRun } from '../../../functions/core/run-lifecycle.ts';
import { listenLocal, type RunningServer } from '../../../functions/hosts/viewer/http-server.ts';
import { makeRunListRoute } from '../../../functions/hosts/viewer/run-list-route.ts';
import { viewerAssets } from '../../../functions/hosts/viewer/viewer-assets.ts';
import { makeViewerRoutes } from '../../../functions/hosts/viewer/viewer-routes.ts';

const store = new MemoryRunStore();
let server: RunningServer;

beforeAll(async () => {
  const app = new Hono();
  app.route('/', makeViewerRoutes({ store, pollMs: 10 }));
  app.route('/', makeRunListRoute(store));
  server = await listenLocal(app, 0);
  const workflow = WorkflowSchema.parse({ nodes: [{ id: 'a', type: 'transform', params: { expression: '1' } }] });
  await createRun(store, {
    runId: 'run-one',
    workflow,
    workflowName: 'wf',
    params: {},
    repairEnabled: false,
    maxRepairs: 0,
    owner: { id: 'me', since: 0 },
    now: Date.now(),
  });
});
afterAll(() => server.close());

describe('the viewer routes', () => {
  it('bundles the page under 300 KB gzipped, with nothing loaded from another origin', async () => {
    const assets = await viewerAssets();
    expect(assets.gzipBytes).toBeLessThan(300 * 1024);
    expect(assets.html).not.toMatch(/https?:\/\//);
    const page = await fetch(`${server.origin}/ui/runs/run-one`);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('/ui/assets/viewer.js');
    expect((await fetch(`${server.origin}/ui/assets/viewer.js`)).headers.get('content-type')).toContain('javascript');
  });

  it('answers the run view, 404 for an unknown run and 400 naming a bad parameter', async () => {
    const view = (await (await fetch(`${server.origin}/runs/run-one/view`)).json()) as { graph: { nodes: { id: string; status: string }[] } };
    expect(view.graph.nodes).toEqual([expect.objectContaining({ id: 'a', status: 'pending' })]);
    const missing = await fetch(`${server.origin}/runs/no-such-run/view`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: { code: 'RUN_NOT_FOUND', message: "no run 'no-such-run'" } });
    const bad = await fetch(`${server.origin}/runs/run-one/view?after=x&wait_s=99`);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { message: string } }).error.message).toContain('wait_s');
  });

  it('holds a long-poll until the run changes, then answers the new view', async () => {
    const first = (await (await fetch(`${server.origin}/runs/run-one/view`)).json()) as { change: string };
    const waiting = fetch(`${server.origin}/runs/run-one/view?after=${encodeURIComponent(first.change)}&wait_s=20`).then(
      (r) => r.json() as Promise<{ change: string; report: { status: string } }>,
    );
    const run = await store.getRun('run-one');
    if (!run) throw new Error('the run vanished');
    await store.putRun({ ...run, status: 'failed', updatedAt: run.updatedAt + 1 }, {});
    const next = await waiting;
    expect(next.change).not.toBe(first.change);
    expect(next.report.status).toBe('failed');
  });

  it('lists runs filtered by status, and refuses a status that does not exist', async () => {
    const failed = (await (await fetch(`${server.origin}/runs?status=failed`)).json()) as { runs: { run_id: string }[] };
    expect(failed.runs.map((r) => r.run_id)).toEqual(['run-one']);
    const none = (await (await fetch(`${server.origin}/runs?status=succeeded`)).json()) as { runs: unknown[] };
    expect(none.runs).toEqual([]);
    expect((await fetch(`${server.origin}/runs?status=done`)).status).toBe(400);
  });
});
