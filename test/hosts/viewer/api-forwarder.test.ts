import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSigV4Signer } from '../../../functions/hosts/cli/api-client.ts';
import type { RunningServer } from '../../../functions/hosts/viewer/http-server.ts';
import { listenLocal } from '../../../functions/hosts/viewer/http-server.ts';
import { startViewerServer } from '../../../functions/hosts/viewer/serve-viewer.ts';

/** A stand-in for the deployed API: it records what reached it. */
const seen: { method: string; path: string; authorization: string | undefined; body: string }[] = [];
let remote: RunningServer;
let viewer: RunningServer;
const saved = { ...process.env };

beforeAll(async () => {
  Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIDVIEWERTEST', AWS_SECRET_ACCESS_KEY: 'not-a-real-secret', AWS_PROFILE: '', AWS_SESSION_TOKEN: '' });
  const api = new Hono();
  api.all('*', async (c) => {
    seen.push({
      method: c.req.method,
      path: new URL(c.req.url).pathname + new URL(c.req.url).search,
      authorization: c.req.header('authorization'),
      body: await c.req.text(),
    });
    return c.json({ runs: [], ok: true });
  });
  remote = await listenLocal(api, 0);
  // The signer a deployed stack's execute-api URL gets, pointed at the stand-in.
  viewer = await startViewerServer({ api: `${remote.origin}/prod`, signer: await makeSigV4Signer('eu-west-1'), port: 0 });
});
afterAll(async () => {
  await viewer.close();
  await remote.close();
  process.env = saved;
});

describe('serve --api: the viewer in front of a remote API', () => {
  it('forwards the page calls under the API base path, signed with SigV4 for execute-api', async () => {
    const list = await fetch(`${viewer.origin}/runs?status=failed`);
    expect(list.status).toBe(200);
    const cancel = await fetch(`${viewer.origin}/runs/run-123456/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: viewer.origin },
      body: '{}',
    });
    expect(cancel.status).toBe(200);
    expect(seen.map((s) => `${s.method} ${s.path}`)).toEqual(['GET /prod/runs?status=failed', 'POST /prod/runs/run-123456/cancel']);
    for (const s of seen)
      expect(s.authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDVIEWERTEST\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=.*, Signature=[0-9a-f]{64}$/,
      );
    expect(seen[1]?.body).toBe('{}');
  });

  it('serves the page itself and forwards nothing else of the API', async () => {
    seen.length = 0;
    expect((await fetch(`${viewer.origin}/ui/`)).status).toBe(200);
    expect((await fetch(`${viewer.origin}/workflows`)).status).toBe(404);
    expect((await fetch(`${viewer.origin}/runs/run-123456/resume`)).status).toBe(404);
    expect(seen).toEqual([]);
  });

  it('refuses a POST from another origin, or without a JSON body, so another page cannot drive the stack', async () => {
    seen.length = 0;
    const foreign = await fetch(`${viewer.origin}/runs/run-123456/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    const form = await fetch(`${viewer.origin}/runs/run-123456/resume`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
    expect(form.status).toBe(403);
    expect(seen).toEqual([]);
  });
});
