import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../../functions/hosts/cli/commands.ts';
import { killStrayChildren, makeTempDir, runCli, spawnCli } from '../support/cli-process.ts';
import { request } from '../support/serve-process.ts';

/** `serve` on a non-loopback address (issue 27): only with --allow-remote, and a token on every request. */

const dir = makeTempDir('serve-remote');
const stateDir = join(dir, 'state');
afterEach(() => killStrayChildren());
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const TOKEN = 'a-token-of-thirty-two-characters';
const hello = { nodes: [{ id: 'greet', type: 'shell', params: { command: 'echo hi' } }] };

describe('flowmend serve --host 0.0.0.0', () => {
  it('refuses to listen without --allow-remote', async () => {
    const result = await runCli(['serve', '--port', '0', '--host', '0.0.0.0'], { stateDir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--host 0.0.0.0 is not a loopback address');
  });

  it('with --allow-remote, answers 401 to a request without the token and serves one with it, the remote CLI included', async () => {
    const proc = spawnCli(['serve', '--port', '0', '--host', '0.0.0.0', '--allow-remote', '--token', TOKEN, '--manual-clock'], { stateDir });
    let stderr = '';
    proc.child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const port = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not listen:\n${stderr}`)), 60_000);
      proc.child.stderr?.on('data', () => {
        const match = /listening on http:\/\/0\.0\.0\.0:(\d+)/.exec(stderr);
        if (match?.[1]) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      });
    });
    const api = `http://127.0.0.1:${port}`;
    const auth = { authorization: `Bearer ${TOKEN}` };
    expect((await request(api, 'GET', '/runs')).status).toBe(401);
    expect((await request(api, 'GET', '/runs', { headers: { authorization: 'Bearer wrong-token-wrong-token-wrong-tok' } })).status).toBe(401);
    const refused = await request<{ error: { code: string } }>(api, 'POST', '/runs', { body: { workflow: hello } });
    expect([refused.status, refused.body.error.code]).toEqual([401, 'UNAUTHORIZED']);
    expect((await request(api, 'GET', '/ui/')).status).toBe(401);
    // A callback of a waiting run carries its own token, not serve's (a third party has none): it reaches its route.
    const callback = await request<{ error: { code: string } }>(api, 'POST', `/callbacks/20261101-000000-abcdef12/${'A'.repeat(43)}`, { body: {} });
    expect([callback.status, callback.body.error.code]).toEqual([404, 'CALLBACK_NOT_OPEN']);
    expect((await request(api, 'POST', '/runs/20261101-000000-abcdef12/approve', { body: {} })).status).toBe(401);
    expect((await request(api, 'GET', '/runs', { headers: auth })).status).toBe(200);
    const started = await request<{ run_id: string }>(api, 'POST', '/runs', { body: { workflow: hello }, headers: auth });
    expect(started.status).toBe(202);

    let stdout = '';
    const io = { stdout: (t: string) => (stdout += t), stderr: () => {} };
    expect(await runCliInProcess(['runs', '--api', api, '--output-format', 'json'], { ...io, env: {} })).not.toBe(0);
    expect(stdout).toContain('UNAUTHORIZED');
    stdout = '';
    expect(await runCliInProcess(['runs', '--api', api, '--output-format', 'json'], { ...io, env: { FLOWMEND_API_TOKEN: TOKEN } })).toBe(0);
    expect(JSON.parse(stdout).runs.map((r: { run_id: string }) => r.run_id)).toContain(started.body.run_id);
    proc.child.kill('SIGTERM');
    await proc.done;
  }, 90_000);
});
