// What a new user trips on in their first week (issue 33, item 7): messages that were wrong, and secrets kept
// out of argv. Text output of the CLI's own code (the bin's wiring), and `--help` through the bin itself.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { type CliResult, makeTempDir, parseJsonOutput, runCli as runBin } from '../support/cli-process.ts';

const dir = makeTempDir('first-week-messages');
const stateDir = join(dir, 'state');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = async (args: string[], env: Record<string, string> = {}): Promise<CliResult> => {
  let stdout = '';
  let stderr = '';
  const code = await runCliInProcess([...args, '--state-dir', stateDir], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env,
    hostOptions: { makeRepairHandler: envRepairHandler({}) },
  });
  return { code, signal: null, stdout, stderr };
};
const write = (name: string, value: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value));
  return path;
};
const occurrences = (text: string, part: string): number => text.split(part).length - 1;

describe('messages of a failed run', () => {
  const failing = write('failing.json', {
    nodes: [
      { id: 'a', type: 'shell', params: { command: 'echo 1' } },
      { id: 'b', type: 'shell', params: { command: 'echo oops >&2; exit 3' } },
    ],
    edges: [{ from: 'a', to: 'b' }],
  });

  it('prints the failure once where it happened and once in the summary, not once per repair message', async () => {
    const run = await cli(['run', failing]);
    expect(run.code).toBe(1);
    expect(occurrences(run.stdout, 'Command failed with exit code 3: oops')).toBe(2);
    expect(run.stdout).toContain("Repairing workflow (attempt 1/3): node 'b'\n");
    // The repair's reason: in its progress line and in the run's error, not a third time.
    expect(occurrences(run.stdout, "the rules found no fix for node 'b'")).toBe(2);
  });

  it('a plain resume after a repair that was not applied does not say the error "came back" after it', async () => {
    const failed = parseJsonOutput<{ run_id: string }>(await cli(['run', failing, '--output-format', 'json']));
    const resumed = await cli(['resume', failed.run_id]);
    expect(resumed.stdout).not.toContain('came back');
    expect(resumed.stdout).toContain('repair attempt 2 failed');
  });

  it('a repair-failed reason about an unresolved template is whole', async () => {
    const unresolved = write('unresolved.json', {
      nodes: [
        { id: 'a', type: 'shell', params: { command: `echo '{"x":1}'` } },
        { id: 'b', type: 'transform', params: { expression: '$', input: '${a.stdout.y.z}' } },
      ],
      edges: [{ from: 'a', to: 'b' }],
    });
    const run = await cli(['run', unresolved, '--output-format', 'json']);
    const report = parseJsonOutput<{ repairs: { reason: string }[]; errors: { message: string }[] }>(run);
    expect(report.repairs[0]?.reason).not.toMatch(/Unresolved template:$/);
    expect(report.errors[0]?.message).toContain("param 'input': ${a.stdout.y.z}");
  });

  it('numbers batch items from 1', async () => {
    const batch = write('batch.json', { nodes: [{ id: 'each', type: 'shell', batch: { items: [1, 2, 3, 4, 5] }, params: { command: 'test ${item} -ne 3' } }] });
    const run = await cli(['run', batch, '--no-repair']);
    expect(run.stdout).toContain("batch node 'each': item 3 of 5 failed");
  });

  it('--help says which runs exit 1, and exits 0', async () => {
    const help = await runBin(['--help'], { stateDir });
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/1 the run did not succeed: failed,\s+cancelled or interrupted/);
  });
});

describe('secret inputs', () => {
  const canary = 'canary-7f3a91';
  const workflow = write('secret.json', {
    inputs: { api_token: { type: 'string', secret: true } },
    nodes: [{ id: 'use', type: 'shell', params: { env: { TOKEN: '${api_token}' }, command: `test "$TOKEN" = ${canary} && echo token-ok` } }],
    outputs: { out: { source: '${use.stdout}' } },
  });

  it('reads FLOWMEND_SECRET_<NAME>_FILE, and warns when one is given on the command line', async () => {
    const file = join(dir, 'token.txt');
    writeFileSync(file, `${canary}\n`);
    const fromFile = await cli(['run', workflow], { FLOWMEND_SECRET_API_TOKEN_FILE: file });
    expect(fromFile.code, fromFile.stdout + fromFile.stderr).toBe(0);
    expect(fromFile.stdout).toContain('token-ok');
    expect(fromFile.stderr).toBe('');

    const onArgv = await cli(['run', workflow, `api_token=${canary}`]);
    expect(onArgv.code).toBe(0);
    expect(onArgv.stderr).toContain("secret input 'api_token' was given on the command line");
    expect(onArgv.stderr).toContain('FLOWMEND_SECRET_API_TOKEN_FILE');
    expect(onArgv.stdout + onArgv.stderr).not.toContain(canary);

    // Missing: the message leads to the variables, not to name=value.
    const missing = await cli(['run', workflow]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("missing secret input 'api_token': set FLOWMEND_SECRET_API_TOKEN, or FLOWMEND_SECRET_API_TOKEN_FILE");
    expect(missing.stderr).not.toContain('pass api_token=');

    const unreadable = await cli(['run', workflow], { FLOWMEND_SECRET_API_TOKEN_FILE: join(dir, 'missing.txt') });
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain('FLOWMEND_SECRET_API_TOKEN_FILE names');
  });
});
