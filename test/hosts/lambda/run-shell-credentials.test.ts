import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO } from '../../support/cli-process.ts';

/*
 * Issue 27, item 3 on AWS: Lambda puts the function's own role credentials in its process environment.
 * The shell runner Lambda's handler, in a process whose environment is a Lambda's, runs a command that
 * prints its own environment and its parent's (the runner's) start-up environment: neither may hold them.
 */

const CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'ASIACANARYKEYID00042',
  AWS_SECRET_ACCESS_KEY: 'canary-role-secret-7c1e',
  AWS_SESSION_TOKEN: 'canary-session-token-3b9d',
};
const LAMBDA_ENVIRONMENT = {
  ...CREDENTIALS,
  AWS_REGION: 'eu-west-1',
  AWS_LAMBDA_FUNCTION_NAME: 'Flowmend-RunShell',
  AWS_LAMBDA_RUNTIME_API: '127.0.0.1:9001',
  // The runner's whole template environment (test/infra/runner-reach.test.ts keeps it so).
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

const INVOKE = `
import { handler } from './functions/hosts/lambda/run-shell.ts';
const event = {
  kind: 'run', runId: 'run-peek', owner: 'exec-1', seq: 1,
  node: { id: 'peek', type: 'shell', cacheKey: 'ck', timeoutS: 30,
    params: { command: 'base64 -w0 /proc/$PPID/environ; echo; env | base64 -w0' } },
};
process.stdout.write(JSON.stringify(await handler(event)));
`;

describe('the shell runner Lambda', () => {
  it("gives a command none of the function's role credentials, in its environment or its parent's", () => {
    const invoked = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', INVOKE], {
      cwd: REPO,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: '/tmp', ...LAMBDA_ENVIRONMENT },
    });
    const result = JSON.parse(invoked.stdout) as { kind: string; outputs: { stdout: string } };
    expect(result.kind, invoked.stderr).toBe('ok');
    const [parent, own] = result.outputs.stdout.split('\n').map((b) => Buffer.from(b, 'base64').toString('utf8'));
    // It did read the runner's start-up environment: the names are there, the values of AWS_* are not.
    expect(parent).toContain('HOME=/tmp');
    expect(parent).toContain('AWS_SECRET_ACCESS_KEY=');
    for (const value of Object.values(CREDENTIALS)) {
      expect(parent).not.toContain(value);
      expect(own).not.toContain(value);
    }
    expect(own).not.toContain('AWS_LAMBDA_RUNTIME_API');
  });
});
