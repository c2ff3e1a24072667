import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../functions/core/run-report.ts';
import { type CliResult, killStrayChildren, makeTempDir, parseJsonOutput, REPO, runCli } from '../support/cli-process.ts';

// pflow's `stdin: true` input, `stdout: true` output (with a real shell pipe) and --no-cache, through the real bin (issue 29).
const dir = makeTempDir('pflow-stdio');
const stateDir = join(dir, 'state');
const BIN = join(REPO, 'bin', 'flowmend.cjs');
afterAll(() => killStrayChildren());

const write = (name: string, lines: string[]): string => {
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n'));
  return path;
};

const echo = write('echo.pflow.md', [
  '## Inputs',
  '### data',
  'What was piped.',
  '- type: string',
  '- stdin: true',
  '## Steps',
  '### echo-it',
  'Echo it back.',
  '- type: shell',
  '- env:',
  '    DATA: ${data}',
  '```shell command',
  'printf "Received: [%s]" "$DATA"',
  '```',
  '## Outputs',
  '### result',
  'The echo.',
  '- source: ${echo-it.stdout}',
]);

const twoOutputs = write('two-outputs.pflow.md', [
  '## Inputs',
  '### greeting',
  'The greeting.',
  '- type: string',
  '- default: hello world',
  '## Steps',
  '### emit',
  'Echo the greeting.',
  '- type: shell',
  '```shell command',
  'echo "${greeting}"',
  '```',
  '### count',
  'Count its characters.',
  '- type: shell',
  '```shell command',
  "printf %s '${greeting}' | wc -c | tr -d ' '",
  '```',
  '## Outputs',
  '### message',
  'The greeting, on stdout.',
  '- source: ${emit.stdout}',
  '- stdout: true',
  '### length',
  'Its length.',
  '- source: ${count.stdout}',
]);

/** `sh -c '<producer> | flowmend <args>'`: stdin is a real pipe (a FIFO), as in a user's shell. */
const piped = (producer: string, args: string[]): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const quoted = [process.execPath, BIN, ...args, '--state-dir', stateDir].map((a) => `'${a.replaceAll("'", `'\\''`)}'`).join(' ');
    const child = spawn('sh', ['-c', `${producer} | ${quoted}`], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });

describe('pflow stdin inputs', () => {
  it('a pipe fills the stdin: true input (one trailing newline dropped, as pflow drops it)', async () => {
    const out = await piped("printf 'two words\\n'", ['run', echo, '--output-format', 'json']);
    expect(out.code, out.stderr).toBe(0);
    expect(parseJsonOutput<RunReport>(out)).toMatchObject({ status: 'succeeded', result: { result: 'Received: [two words]' } });
  });

  it('the command line wins over the pipe for that input', async () => {
    const out = await piped("printf 'piped'", ['run', echo, 'data=given', '--output-format', 'json']);
    expect(parseJsonOutput<RunReport>(out)).toMatchObject({ status: 'succeeded', result: { result: 'Received: [given]' } });
  });

  it('an empty pipe is an empty value (pflow: empty is content)', async () => {
    const out = await piped("printf ''", ['run', echo, '--output-format', 'json']);
    expect(parseJsonOutput<RunReport>(out)).toMatchObject({ status: 'succeeded', result: { result: 'Received: []' } });
  });

  it('stdin that is not a pipe or a file is not read: the input is missing, and nothing waits for it', async () => {
    // A socket its parent never closes (what a Node parent's pipe is): reading it would never end.
    const child = spawn(process.execPath, [BIN, 'run', echo, '--state-dir', stateDir, '--output-format', 'json'], {
      cwd: REPO,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const code = await new Promise((resolve) => child.on('close', resolve));
    child.stdin.destroy();
    expect(code).toBe(2);
    expect(JSON.parse(stdout)).toMatchObject({ success: false, status: 'invalid', error: expect.stringContaining("'data'") });
  });
});

describe('pflow stdout outputs', () => {
  it('text mode prints that output alone on stdout, progress and the summary on stderr', async () => {
    const out = await runCli(['run', twoOutputs, 'greeting=hi alice'], { stateDir });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toBe('hi alice\n');
    expect(out.stderr).toContain('emit...');
    expect(out.stderr).toContain('✓ Workflow completed');
  });

  it('JSON mode prints every output, as without the mark', async () => {
    const out = await runCli(['run', twoOutputs, 'greeting=hi alice', '--output-format', 'json'], { stateDir });
    expect(parseJsonOutput<RunReport>(out).result).toEqual({ message: 'hi alice', length: '8' });
  });

  it('a failed run prints nothing on stdout and exits 1', async () => {
    const failing = write('failing-stdout.pflow.md', [
      '## Steps',
      '### boom',
      'Fail.',
      '- type: shell',
      '- command: exit 3',
      '## Outputs',
      '### message',
      'Never there.',
      '- source: ${boom.stdout}',
      '- stdout: true',
    ]);
    const out = await runCli(['run', failing, '--no-repair'], { stateDir });
    expect(out.code).toBe(1);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('✗ Workflow failed');
  });

  it('chains: one workflow streams its output into the next one stdin', async () => {
    const quoted = [process.execPath, BIN, 'run', twoOutputs, 'greeting=chained', '--state-dir', stateDir].map((a) => `'${a}'`).join(' ');
    const out = await piped(quoted, ['run', echo]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain('result: Received: [chained]');
  });
});

describe("pflow's --no-cache", () => {
  it('skips memo reads for that run only; what it computed is reused by the next run', async () => {
    const stamp = write('stamp.pflow.md', ['## Steps', '### stamp', 'A process id.', '- type: shell', '- cache: true', '- command: echo $$']);
    const pid = async (...flags: string[]) =>
      parseJsonOutput<RunReport>(await runCli(['run', stamp, '--output-format', 'json', ...flags], { stateDir })).result;
    const first = await pid();
    expect(await pid()).toEqual(first);
    const bypassed = await pid('--no-cache');
    expect(bypassed).not.toEqual(first);
    expect(await pid()).toEqual(bypassed);
  });
});
