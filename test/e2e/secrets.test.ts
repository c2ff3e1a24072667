import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCliStore } from '../../functions/hosts/cli/cli-store.ts';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { writeWorkflow } from '../support/cli-process.ts';
import { makeCliSandbox } from '../support/cli-sandbox.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';

const TOKEN = 'canary-token-7f3a9c';
const API_KEY = 'sk-ant-canary-5b1e2d';
const AWS_SECRET = 'aws-canary-secret-4d2f';
const CANARIES = [TOKEN, API_KEY, AWS_SECRET];

const sandbox = makeCliSandbox('secrets');
let fake: FakeAnthropic;
let server: HttpTestServer;
beforeAll(async () => {
  [fake, server] = await Promise.all([startFakeAnthropic(), startHttpTestServer()]);
});
afterAll(async () => {
  await Promise.all([fake.close(), server.close()]);
  await sandbox.cleanup();
});

let printed = '';
const cli = async (argv: string[], extraEnv: Record<string, string> = {}) => {
  const env = { ANTHROPIC_API_KEY: API_KEY, ANTHROPIC_BASE_URL: fake.baseURL, AWS_SECRET_ACCESS_KEY: AWS_SECRET, ...extraEnv };
  let stdout = '';
  let stderr = '';
  const code = await runCli([...argv, '--state-dir', sandbox.stateDir], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env,
    hostOptions: { makeRepairHandler: envRepairHandler(env), retryIntervalMs: 0 },
  });
  printed += stdout + stderr;
  return { code, stdout, stderr };
};

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

const workflow = () => ({
  inputs: { token: { type: 'string' as const, secret: true } },
  nodes: [
    { id: 'leak', type: 'shell', params: { command: 'echo "token=${token} key=$ANTHROPIC_API_KEY aws=$AWS_SECRET_ACCESS_KEY"; env' } },
    {
      id: 'call',
      type: 'http',
      params: { url: `${server.url}/echo`, method: 'POST', headers: { Authorization: 'Bearer ${token}', 'X-Token': '${token}' }, body: { t: '${token}' } },
    },
    { id: 'boom', type: 'shell', params: { command: 'echo "bad ${token}" >&2; exit 3' } },
  ],
  edges: [
    { from: 'leak', to: 'call' },
    { from: 'call', to: 'boom' },
  ],
  outputs: { said: { source: '${leak.stdout}' } },
});

describe('secrets never reach an output channel or the store', () => {
  it('redacts a secret input (in a command, an Authorization header, a body) and the engine keys everywhere, and keeps them from commands', async () => {
    const wf = writeWorkflow(sandbox.dir, 'secret-wf', workflow());
    const repaired = workflow();
    (repaired.nodes[2] as { params: Record<string, unknown> }).params = { command: 'echo fixed' };
    fake.enqueue({ text: JSON.stringify({ workflow: repaired, reason: 'The command failed on purpose; make it succeed.' }) });

    const first = await cli(['run', wf, '--output-format', 'json'], { FLOWMEND_SECRET_TOKEN: TOKEN });
    expect(first.code, first.stdout).toBe(0);
    const report = JSON.parse(first.stdout) as { status: string; result: { said: string }; run_id: string; repairs: unknown[] };
    expect(report.status).toBe('succeeded');
    expect(report.repairs).toHaveLength(1);
    // The command got the value (it printed it: redacted on the way out), not the engine's keys.
    expect(report.result.said).toMatch(/^token=\[redacted\] key= aws=\n/);
    expect(report.result.said).not.toMatch(/ANTHROPIC_|AWS_|FLOWMEND_/);
    // The server did get the real values: redaction is for what flowmend keeps and shows.
    const sent = server.requests.find((r) => r.url.startsWith('/echo'));
    expect(sent?.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(sent?.headers['x-token']).toBe(TOKEN);

    const again = await cli(['status', report.run_id, '--output-format', 'json']);
    const text = await cli(['status', report.run_id]);
    expect(again.code + text.code).toBe(0);

    // Every channel: what was printed, what the repairer saw, and the store, on disk and through its API.
    const { store, close } = await openCliStore({ stateDir: sandbox.stateDir, store: 'sqlite', table: undefined }, {});
    let stored: string;
    try {
      stored = JSON.stringify([
        await store.getRun(report.run_id),
        await store.listRecords(report.run_id),
        await store.listEvents(report.run_id),
        await store.listRuns({ limit: 10 }),
      ]);
    } finally {
      close();
    }
    expect(stored).toContain('[redacted]');
    const onDisk = filesUnder(sandbox.stateDir)
      .map((file) => readFileSync(file).toString('latin1'))
      .join('\n');
    const repairPrompts = JSON.stringify(fake.calls.map((call) => call.body));
    expect(fake.calls).toHaveLength(1);
    for (const canary of CANARIES) {
      expect(printed, 'printed output').not.toContain(canary);
      expect(repairPrompts, 'repair prompt').not.toContain(canary);
      expect(stored, 'store').not.toContain(canary);
      expect(onDisk, 'state dir').not.toContain(canary);
    }
  });

  it('asks a resume for the secret inputs again, since the store never had them', async () => {
    const failing = {
      ...workflow(),
      nodes: [{ id: 'check', type: 'shell', params: { command: 'test "${token}" = "$EXPECTED"', env: { EXPECTED: TOKEN } } }],
      edges: [],
    };
    (failing.nodes[0] as { params: Record<string, unknown> }).params.command = 'test -f "$MARK" && test "${token}" = "$EXPECTED"';
    (failing.nodes[0] as { params: Record<string, unknown> }).params.env = { EXPECTED: TOKEN, MARK: join(sandbox.dir, 'go') };
    const wf = writeWorkflow(sandbox.dir, 'secret-resume', { ...failing, outputs: {} });
    const first = await cli(['run', wf, `token=${TOKEN}`, '--no-repair', '--output-format', 'json']);
    expect(first.code).toBe(1);
    const runId = (JSON.parse(first.stdout) as { run_id: string }).run_id;

    const without = await cli(['resume', runId, '--output-format', 'json']);
    expect(without.code).toBe(2);
    expect(JSON.parse(without.stdout)).toMatchObject({
      success: false,
      error: expect.stringContaining("'token' (set FLOWMEND_SECRET_TOKEN or FLOWMEND_SECRET_TOKEN_FILE)"),
    });

    readFileSync(wf); // the workflow is unchanged; only the marker file lets the check pass now
    await import('node:fs').then((fs) => fs.writeFileSync(join(sandbox.dir, 'go'), ''));
    const resumed = await cli(['resume', runId, '--output-format', 'json'], { FLOWMEND_SECRET_TOKEN: TOKEN });
    expect(resumed.code, resumed.stdout).toBe(0);
    expect(printed).not.toContain(TOKEN);
  });
});

describe('literal credentials in a workflow', () => {
  it('are refused by validation, pointing to a secret input', async () => {
    const wf = writeWorkflow(sandbox.dir, 'literal-auth', {
      nodes: [
        {
          id: 'call',
          type: 'http',
          params: {
            url: `${server.url}/echo`,
            headers: { Authorization: 'Bearer sk-literal-123456', 'X-Mine': 'x-literal-654321' },
            sensitive_headers: ['X-Mine'],
          },
        },
      ],
    });
    const result = await cli(['validate', wf, '--output-format', 'json']);
    expect(result.code).toBe(2);
    const issues = (JSON.parse(result.stdout) as { issues: { code: string; path: string; hint: string }[] }).issues;
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['LITERAL_CREDENTIAL', 'nodes[0].params.headers.Authorization'],
      ['LITERAL_CREDENTIAL', 'nodes[0].params.headers.X-Mine'],
    ]);
    expect(issues[0]?.hint).toContain('"secret": true');
  });
});
