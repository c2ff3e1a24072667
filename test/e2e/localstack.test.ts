import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const ENDPOINT = process.env.LOCALSTACK_ENDPOINT;
const STACK = 'FlowmendLocal';
const ROOT = join(import.meta.dirname, '..', '..');
const DEPLOY_TIMEOUT_MS = 15 * 60_000;
const RUN_TIMEOUT_MS = 3 * 60_000;

/** What the CLI tools need to talk to LocalStack instead of AWS (any credentials are accepted). */
const localEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  AWS_ENDPOINT_URL: ENDPOINT,
  AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
  AWS_DEFAULT_REGION: process.env.AWS_REGION ?? 'us-east-1',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  CDK_DISABLE_CLI_TELEMETRY: 'true',
});

const cdklocal = (args: string[]) =>
  run('npx', ['--no-install', 'cdklocal', ...args, '--no-notices', '-c', `flowmend:stackName=${STACK}`], {
    cwd: ROOT,
    env: localEnv(),
    timeout: DEPLOY_TIMEOUT_MS,
    maxBuffer: 64 * 1024 * 1024,
  });

describe.skipIf(ENDPOINT === undefined)('LocalStack end to end (set LOCALSTACK_ENDPOINT, e.g. http://localhost:4566, to run; skipped otherwise)', () => {
  let outdir = '';
  let apiBase = '';

  beforeAll(async () => {
    outdir = await mkdtemp(join(tmpdir(), 'flowmend-localstack-'));
    const outputs = join(outdir, 'outputs.json');
    await cdklocal(['bootstrap']);
    // Rules, not Scheduler: LocalStack stores Scheduler schedules but never fires them.
    await cdklocal([
      'deploy',
      '--require-approval',
      'never',
      '-c',
      'flowmend:scheduleMode=rules',
      '-c',
      'flowmend:removalPolicy=destroy',
      '--outputs-file',
      outputs,
    ]);
    const stackOutputs = (JSON.parse(await readFile(outputs, 'utf8')) as Record<string, Record<string, string>>)[STACK] ?? {};
    const apiId = stackOutputs.RestApiId;
    if (!apiId) throw new Error(`the deployed stack has no RestApiId output: ${JSON.stringify(stackOutputs)}`);
    apiBase = `${ENDPOINT}/restapis/${apiId}/v1/_user_request_`;
  }, DEPLOY_TIMEOUT_MS);

  afterAll(async () => {
    if (outdir) await rm(outdir, { recursive: true, force: true });
    await cdklocal(['destroy', '--force']).catch(() => undefined);
  }, DEPLOY_TIMEOUT_MS);

  it(
    'runs a workflow started through the REST API to success, with its outputs',
    async () => {
      const workflow = JSON.parse(await readFile(join(ROOT, 'examples', 'hello.json'), 'utf8')) as unknown;
      const started = await fetch(`${apiBase}/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': `localstack-${Date.now()}` },
        body: JSON.stringify({ workflow }),
      });
      expect(started.status).toBe(202);
      const { run_id: runId } = (await started.json()) as { run_id: string };

      let report: { status?: string; result?: unknown } = {};
      const deadline = Date.now() + RUN_TIMEOUT_MS;
      while (Date.now() < deadline) {
        report = (await (await fetch(`${apiBase}/runs/${runId}`)).json()) as typeof report;
        if (report.status !== 'running') break;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
      expect(report).toMatchObject({ status: 'succeeded' });
      expect(report.result).toBeDefined();
    },
    RUN_TIMEOUT_MS + 10_000,
  );

  it('registers a workflow and answers for it through the same API', async () => {
    const workflow = JSON.parse(await readFile(join(ROOT, 'examples', 'hello.json'), 'utf8')) as unknown;
    const put = await fetch(`${apiBase}/workflows/hello`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(workflow) });
    expect(put.status).toBe(201);
    const listed = (await (await fetch(`${apiBase}/workflows`)).json()) as { workflows: { name: string }[] };
    expect(listed.workflows.map((w) => w.name)).toContain('hello');
  });
});
