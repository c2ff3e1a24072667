// Every workflow in examples/ runs to its result against local fakes: HTTP APIs on 127.0.0.1, the fake
// Anthropic API, the suite's stdio MCP server. The CLI's own code in this process, wired as the bin wires it.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { makeTempDir, REPO } from '../support/cli-process.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';

const dir = makeTempDir('examples');
const stateDir = join(dir, 'state');
let api: HttpTestServer;
let llm: FakeAnthropic;

type Report = {
  run_id: string;
  status: string;
  result: Record<string, unknown>;
  repairs: { source: string; outcome: string }[];
  errors: unknown[];
  waiting?: { kind: string; node_id?: string; preview?: Record<string, unknown> };
};

/** Any `flowmend` command with `--output-format json`; `env` is the CLI's own (secrets). */
const cli = async (args: string[], env: Record<string, string> = {}): Promise<{ code: number; report: Report; output: string }> => {
  let stdout = '';
  let stderr = '';
  const code = await runCli([...args, '--state-dir', stateDir, '--output-format', 'json'], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env,
    hostOptions: { makeRepairHandler: envRepairHandler({}) },
  });
  return { code, report: JSON.parse(stdout) as Report, output: `${stdout}\n${stderr}` };
};

/** `flowmend run examples/<file> [name=value ...]`, which must succeed. */
const run = async (file: string, params: string[] = [], options: { args?: string[]; env?: Record<string, string> } = {}): Promise<Report> => {
  const { code, report, output } = await cli(['run', join(REPO, 'examples', file), ...params, ...(options.args ?? [])], options.env);
  expect(code, output).toBe(0);
  return report;
};

beforeAll(async () => {
  [api, llm] = await Promise.all([startHttpTestServer(), startFakeAnthropic()]);
  vi.stubEnv('ANTHROPIC_API_KEY', 'test-key');
  vi.stubEnv('ANTHROPIC_BASE_URL', llm.baseURL);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await Promise.all([api?.close(), llm?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

const base = () => `api_base=${api.url}`;

describe('examples/', () => {
  it('webhook-summary.json: summarises an issue with the LLM and posts it to the chat API with the secret token', async () => {
    api.route('/api/chat.postMessage', { body: { ok: true, ts: '1764115200.000100' } });
    llm.enqueue({ text: 'Login fails after the 2.4 upgrade for SSO users. Label: bug' });
    const event = {
      action: 'opened',
      issue: { title: 'SSO login broken', body: 'Since 2.4 we get a 500 on /login.', html_url: 'https://github.com/acme/app/issues/7' },
    };
    const report = await run('webhook-summary.json', [`event=${JSON.stringify(event)}`, `chat_url=${api.url}/api/chat.postMessage`], {
      env: { FLOWMEND_SECRET_CHAT_TOKEN: 'xoxb-test-token' },
    });
    expect(report.result).toEqual({ summary: 'Login fails after the 2.4 upgrade for SSO users. Label: bug', message_ts: '1764115200.000100' });
    const post = api.requests.find((r) => r.url === '/api/chat.postMessage');
    expect(post?.headers.authorization).toBe('Bearer xoxb-test-token');
    expect(JSON.parse(post?.body ?? '{}')).toMatchObject({ channel: '#triage', text: expect.stringContaining('SSO login broken') });
    expect(JSON.stringify(llm.calls.at(-1)?.body)).toContain('Since 2.4 we get a 500');
  });

  it('nightly-report.json: totals the day from the API and writes the Markdown report', async () => {
    api.route('/v1/orders', {
      body: {
        day: '2026-11-25',
        orders: [
          { customer: 'acme', total: 120 },
          { customer: 'globex', total: 80 },
          { customer: 'initech', total: 300 },
        ],
      },
    });
    const report = await run('nightly-report.json', [base(), 'day=2026-11-25'], { args: ['--workspace', dir] });
    expect(report.result).toEqual({ report: join(dir, 'reports/nightly-2026-11-25.md'), revenue: 500 });
    expect(readFileSync(join(dir, 'reports/nightly-2026-11-25.md'), 'utf8')).toContain('- Top customer: initech');
    expect(api.requests.some((r) => r.url === '/v1/orders?day=2026-11-25')).toBe(true);
  });

  it('batch-enrich.json: scores every customer with at most 3 requests in flight', async () => {
    const ids = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7'];
    api.route('/v1/customers', { body: { customers: ids.map((id) => ({ id })) } });
    const spans: [number, number][] = [];
    for (const [i, id] of ids.entries()) {
      api.route(`/v1/scores/${id}`, () => {
        const now = Date.now();
        spans.push([now, now + 200]);
        return { body: { id, score: i % 3 === 0 ? 0.9 : 0.2 }, delayMs: 200 };
      });
    }
    const report = await run('batch-enrich.json', [base()]);
    expect(report.result).toEqual({ scored: 7, risky: ['c1', 'c4', 'c7'] });
    const inFlight = Math.max(...spans.map(([start]) => spans.filter(([s, e]) => s <= start && start < e).length));
    expect(inFlight).toBeLessThanOrEqual(3);
    expect(inFlight).toBeGreaterThan(1);
  });

  it('repair-by-rule.json: the rules repair the misspelt key, and the profile is fetched once', async () => {
    api.route('/v1/users/ada', { body: { user: { name: 'Ada Lovelace', email: 'ada@example.com' } } });
    const report = await run('repair-by-rule.json', [base()]);
    expect(report.result).toEqual({ greeting: 'Welcome back, Ada Lovelace!' });
    expect(report.repairs.map((r) => `${r.source} ${r.outcome}`)).toEqual(['rules applied']);
    expect(api.requests.filter((r) => r.url === '/v1/users/ada')).toHaveLength(1);
  });

  it('nested-release.json: the changelog runs as a child workflow and its notes come back', async () => {
    api.route('/v1/commits', {
      body: {
        commits: [
          { message: 'Resume replays batch items', author: 'ada' },
          { message: 'Viewer: run list filters', author: 'grace' },
        ],
      },
    });
    const report = await run('nested-release.json', [base()]);
    expect(report.result.notes).toBe('## Release 2.4.0\n\n- Resume replays batch items (ada)\n- Viewer: run list filters (grace)');
    expect(api.requests.some((r) => r.url === '/v1/commits?since=2.4.0')).toBe(true);
  });

  it('triage.pflow.md: the LLM labels the email in pflow markdown', async () => {
    llm.enqueue({ text: ' Billing\n' });
    const report = await run('triage.pflow.md', ['subject=Charged twice', 'body=My card was charged twice for November.']);
    expect(report.result).toEqual({ label: 'billing' });
    expect(JSON.stringify(llm.calls.at(-1)?.body)).toContain('Charged twice');
  });

  it('mcp-announce.json: posts the latest release through the MCP server', async () => {
    api.route('/v1/releases/latest', { body: { tag: 'v2.4.0', title: 'Faster resumes' } });
    const calls = join(dir, 'mcp-calls');
    const config = join(dir, 'mcp-servers.json');
    const server = { command: process.execPath, args: [join(REPO, 'test/support/mcp-stdio-server.mjs')], env: { MCP_CALLS_FILE: calls } };
    writeFileSync(config, JSON.stringify({ mcpServers: { chat: server } }));
    const report = await run('mcp-announce.json', [base()], { args: ['--mcp-config', config] });
    expect(JSON.parse(String(report.result.posted))).toEqual({ ok: true, channel: 'releases' });
    expect(readFileSync(calls, 'utf8')).toBe('releases:Released v2.4.0: Faster resumes\n');
  });
  describe('approval-deploy.json: the deploy waits for a person', () => {
    const token = { FLOWMEND_SECRET_DEPLOY_TOKEN: 'deploy-token-7f3a9c' };
    const deploys = () => api.requests.filter((r) => r.url === '/v1/deployments');
    const said = () => api.requests.filter((r) => r.url === '/hooks/releases').map((r) => (JSON.parse(r.body) as { text: string }).text);
    const start = async (version: string): Promise<Report> => {
      const { code, report, output } = await cli(
        ['run', join(REPO, 'examples/approval-deploy.json'), base(), `version=${version}`, `chat_url=${api.url}/hooks/releases`],
        token,
      );
      expect(code, output).toBe(4);
      return report;
    };

    beforeAll(() => {
      api.route('/v1/releases/2.4.1/checks', { body: { commit: '9c1e2f0', summary: '214 passed, 0 failed' } });
      api.route('/v1/releases/2.5.0/checks', { body: { commit: 'a77d310', summary: '198 passed, 3 skipped' } });
      api.route('/v1/deployments', (request) => ({
        status: 201,
        body: { id: 'dep-42', url: 'https://deploy.example.com/deployments/dep-42', version: (JSON.parse(request.body) as { version: string }).version },
      }));
      api.route('/hooks/releases', { body: 'ok' });
    });

    it('waits (exit 4) showing the approver the call it will make, then approve deploys once and tells the channel', async () => {
      const paused = await start('2.4.1');
      expect(paused).toMatchObject({ status: 'waiting', waiting: { kind: 'approval', node_id: 'deploy' } });
      expect(paused.waiting?.preview).toMatchObject({
        url: `${api.url}/v1/deployments`,
        method: 'POST',
        headers: { Authorization: '[redacted]' },
        body: { version: '2.4.1', environment: 'production', commit: '9c1e2f0', checks: '214 passed, 0 failed' },
      });
      expect(JSON.stringify(paused)).not.toContain('deploy-token-7f3a9c');
      expect(deploys()).toHaveLength(0);

      const approved = await cli(['approve', paused.run_id, '--comment', 'go'], token);
      expect(approved.code, approved.output).toBe(0);
      expect(approved.report).toMatchObject({ status: 'succeeded', result: { deployment: 'dep-42', announced: 200 } });
      expect(deploys()).toHaveLength(1);
      expect(deploys()[0]?.headers.authorization).toBe('Bearer deploy-token-7f3a9c');
      expect(said()).toEqual(['Deployed 2.4.1 to production: https://deploy.example.com/deployments/dep-42']);
    });

    it('denied: nothing is deployed, the channel is told, and the run succeeds on its error edge', async () => {
      const paused = await start('2.5.0');
      const denied = await cli(['approve', paused.run_id, '--deny', '--comment', 'code freeze until Monday'], token);
      expect(denied.code, denied.output).toBe(0);
      expect(denied.report).toMatchObject({ status: 'succeeded', result: { deployment: null, announced: 200 } });
      expect(deploys().filter((r) => r.body.includes('2.5.0'))).toHaveLength(0);
      expect(said().at(-1)).toMatch(/^2\.5\.0 was not deployed to production: the deploy was denied/);
      const status = await cli(['status', paused.run_id]);
      expect(JSON.stringify(status.report)).toContain('code freeze until Monday');
    });
  });
});
