import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AwsSecretResolver } from '../../functions/adapters/aws-secret-resolver.ts';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { makeCliSandbox } from '../support/cli-sandbox.ts';
import { type FakeSecrets, startFakeSecrets } from '../support/fake-secrets.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';

// Secret inputs read at use from Secrets Manager and SSM (loopback fakes of their JSON APIs), through the
// real local host: the real ASL in aws-local-stepfunctions, the real RunNode handlers, SQLite on disk.
const DB_PASSWORD = 'sm-canary-9d8c7b6a';
const API_TOKEN = 'ssm-canary-1f2e3d4c';
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

const sandbox = makeCliSandbox('secret-sources');
let fake: FakeSecrets;
let server: HttpTestServer;
beforeAll(async () => {
  [fake, server] = await Promise.all([startFakeSecrets(), startHttpTestServer()]);
  fake.secrets.set('flowmend/inputs/db-password', DB_PASSWORD);
  fake.parameters.set('/flowmend/inputs/api-token', API_TOKEN);
});
afterAll(async () => {
  await Promise.all([fake.close(), server.close()]);
  await sandbox.cleanup();
});

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });

/** Runs the CLI in this process; collects what it printed and every execution's event log. */
const cli = async (argv: string[]) => {
  const history: Promise<string>[] = [];
  let printed = '';
  const code = await runCli([...argv, '--state-dir', sandbox.stateDir, '--output-format', 'json'], {
    stdout: (t) => (printed += t),
    stderr: (t) => (printed += t),
    env: {},
    hostOptions: {
      retryIntervalMs: 0,
      secrets: new AwsSecretResolver({ secretsManager: fake.secretsManager, ssm: fake.ssm }),
      observeExecution: (events) => {
        history.push(
          (async () => {
            const lines: string[] = [];
            for await (const event of events) lines.push(JSON.stringify(event));
            return lines.join('\n');
          })(),
        );
      },
    },
  });
  return { code, printed, history: (await Promise.all(history)).join('\n') };
};

const workflow = () => ({
  inputs: {
    db_password: { type: 'string' as const, secret: true, from: 'secretsmanager:flowmend/inputs/db-password' },
    api_token: { type: 'string' as const, secret: true, from: 'ssm:/flowmend/inputs/api-token' },
  },
  nodes: [
    // The command sees the value through its env; it prints the value's hash (to prove it) and the value (to be redacted).
    { id: 'use', type: 'shell', params: { env: { PW: '${db_password}' }, command: 'printf %s "$PW" | sha256sum | cut -c1-64; echo "pw=$PW"' } },
    {
      id: 'call',
      type: 'http',
      params: { url: `${server.url}/echo`, method: 'POST', headers: { Authorization: 'Bearer ${api_token}' }, body: { t: '${api_token}' } },
    },
  ],
  edges: [{ from: 'use', to: 'call' }],
  outputs: { hash: { source: '${use.stdout}' }, echoed: { source: '${call.response}' } },
});

describe('secret inputs from Secrets Manager and SSM Parameter Store', () => {
  it('are read by the runner at use, and their values reach neither the execution history nor the store nor the output', async () => {
    const path = join(sandbox.dir, 'from.json');
    writeFileSync(path, JSON.stringify(workflow()));
    const run = await cli(['run', path]);
    expect(run.code, run.printed).toBe(0);
    const report = JSON.parse(run.printed) as { result: { hash: string; echoed: unknown }; run_id: string };
    // Both values reached their use: the command hashed the real password, the server got the real token.
    expect(report.result.hash).toContain(sha(DB_PASSWORD));
    expect(report.result.hash).toContain('pw=[redacted]');
    expect(server.requests.at(-1)?.headers.authorization).toBe(`Bearer ${API_TOKEN}`);
    expect(server.requests.at(-1)?.body).toBe(JSON.stringify({ t: API_TOKEN }));
    expect(fake.calls).toEqual(['secretsmanager.GetSecretValue flowmend/inputs/db-password', 'AmazonSSM.GetParameter /flowmend/inputs/api-token']);

    // The state machine's execution data (what Step Functions keeps in its history and logs) holds names, never values.
    expect(run.history).toContain('secretsmanager:flowmend/inputs/db-password');
    expect(run.history).toContain('ssm:/flowmend/inputs/api-token');
    for (const secret of [DB_PASSWORD, API_TOKEN]) {
      expect(run.history).not.toContain(secret);
      expect(run.printed).not.toContain(secret);
      for (const file of filesUnder(sandbox.stateDir)) expect(readFileSync(file).includes(secret), file).toBe(false);
    }
  });

  it('refuses a value passed for such an input, and a secret put in a shell command where quoting cannot reach it', async () => {
    const path = join(sandbox.dir, 'from.json');
    writeFileSync(path, JSON.stringify(workflow()));
    const given = await cli(['run', path, 'db_password=guess']);
    expect(given.code).toBe(2);
    expect(given.printed).toMatch(/db_password' is read from secretsmanager:flowmend\/inputs\/db-password/);

    const inCommand = join(sandbox.dir, 'in-command.json');
    writeFileSync(
      inCommand,
      JSON.stringify({ ...workflow(), nodes: [{ id: 'use', type: 'shell', params: { command: 'echo ${db_password}' } }], edges: [], outputs: {} }),
    );
    const refused = await cli(['run', inCommand, '--no-repair']);
    expect(refused.code).toBe(1);
    expect(refused.printed).toMatch(/read from secretsmanager:flowmend\/inputs\/db-password is in the shell command: pass it through the node's env/);
    expect(refused.printed).not.toContain(DB_PASSWORD);
  });

  it('fails the node, not repairably, naming a secret that cannot be read', async () => {
    const path = join(sandbox.dir, 'missing.json');
    writeFileSync(
      path,
      JSON.stringify({
        inputs: { gone: { secret: true, from: 'ssm:/flowmend/no-such-parameter' } },
        nodes: [{ id: 'use', type: 'shell', params: { env: { X: '${gone}' }, command: 'echo "$X"' } }],
      }),
    );
    const run = await cli(['run', path]);
    expect(run.code).toBe(1);
    const report = JSON.parse(run.printed) as { errors: { message: string; fixable: boolean }[] };
    expect(report.errors[0]).toMatchObject({
      fixable: false,
      message: expect.stringMatching(/ssm:\/flowmend\/no-such-parameter cannot be read \(ParameterNotFound/),
    });
  });
});
