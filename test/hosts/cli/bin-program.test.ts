// bin/flowmend.cjs run as a program, as npm links it (node_modules/.bin/flowmend, `npx flowmend`): /bin/sh reads
// its second line and execs Node on it. Node 20 reads NODE_EXTRA_CA_CERTS before any JavaScript runs, and
// warns on stderr when the file cannot be read: the warning shows which commands kept the variable.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, REPO } from '../../support/cli-process.ts';

const BIN = join(REPO, 'bin', 'flowmend.cjs');
const hello = join(REPO, 'examples', 'hello.json');
const dir = makeTempDir('bin-program');
const CA_WARNING = 'Ignoring extra certs';

// No AWS region or endpoint: `--store dynamodb` then stops at its configuration check, before any connection.
const { AWS_REGION, AWS_DEFAULT_REGION, AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB, ...baseEnv } = process.env;
const program = (args: string[], bin = BIN, env: Record<string, string> = {}) =>
  spawnSync(bin, args, {
    encoding: 'utf8',
    env: { ...baseEnv, NODE_EXTRA_CA_CERTS: join(dir, 'no-such-bundle.pem'), FLOWMEND_STATE_DIR: '', FLOWMEND_API_URL: '', ...env },
  });

describe('the flowmend bin run as a program', () => {
  it('starts `validate` without the extra CA certificates: it opens no connection', () => {
    const validated = program(['validate', hello]);
    expect(validated.stdout).toContain('is valid');
    expect(validated.status).toBe(0);
    // Nothing from the shell either: its line is read by /bin/sh and by Node, and neither may complain.
    expect(validated.stderr).toBe('');
  });

  it('starts `status`, `runs` and `logs` on the local store without them: they open no connection and start no program', () => {
    const state = join(dir, 'state');
    const status = program(['status', 'no-such-run', '--state-dir', state]);
    expect(status.status).toBe(2);
    expect(status.stderr).toBe(`flowmend: no run 'no-such-run' in ${state} (see \`flowmend runs\`)\n`);
    const runs = program(['runs', '--state-dir', state]);
    expect(runs.status).toBe(0);
    expect(runs.stderr).toBe('');
    const logs = program(['logs', 'no-such-run', '--state-dir', state]);
    expect(logs.status).toBe(2);
    expect(logs.stderr).not.toContain(CA_WARNING);
  });

  it('hands them to every other command, which Node starts without, and reads them at its first TLS context', () => {
    // `status` on an https API that refuses the connection: the TLS context is made before the refusal.
    const bundle = join(dir, 'no-such-bundle.pem');
    const notice = `Warning: Ignoring extra certs from \`${bundle}\`, load failed: ENOENT`;
    for (const [args, env] of [
      [['status', 'no-such-run', '--api', 'https://127.0.0.1:9'], {}],
      [['runs', '--api=https://127.0.0.1:9'], {}],
      [['logs', 'no-such-run'], { FLOWMEND_API_URL: 'https://127.0.0.1:9' }],
    ] as const) {
      const result = program([...args], BIN, env);
      expect(result.stderr, args.join(' ')).toContain(notice);
      // Node's own warning at its start, before any JavaScript, would come first.
      expect(result.stderr.indexOf(CA_WARNING), args.join(' ')).toBe(result.stderr.indexOf(notice) + 'Warning: '.length);
    }
    // A run that makes no TLS context never reads the file; its commands get the variable back (when passed
    // to them, as any other), while the CLI's process was started without it.
    const workflow = join(dir, 'environ.json');
    writeFileSync(
      workflow,
      JSON.stringify({
        nodes: [
          {
            id: 'env',
            type: 'shell',
            params: { command: 'echo "$NODE_EXTRA_CA_CERTS"; tr "\\0" "\\n" < /proc/$PPID/environ | grep -c ^NODE_EXTRA_CA_CERTS= || true' },
          },
        ],
      }),
    );
    const run = program(['run', workflow, '--output-format', 'json', '--state-dir', join(dir, 'state')], BIN, { FLOWMEND_COMMAND_ENV: 'NODE_EXTRA_CA_CERTS' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout).result.stdout).toBe(`${bundle}\n0`);
  });

  it("keeps them for Node's start under --use-openssl-ca, which adds them to OpenSSL's store instead of its own", () => {
    const run = program(['run', hello, '--state-dir', join(dir, 'state')], BIN, { NODE_OPTIONS: '--use-openssl-ca' });
    expect(run.status).toBe(0);
    // Node's own warning, before any JavaScript: OpenSSL's error text, not the CLI's.
    expect(run.stderr).toMatch(/^Warning: Ignoring extra certs from `[^`]+no-such-bundle\.pem`, load failed: error:/);
  });

  it('starts `serve` under its Node flags, which the shell line names as bin/cli-bundle.cjs does', async () => {
    const { SERVE_NODE_FLAGS } = createRequire(import.meta.url)('../../../bin/cli-bundle.cjs') as { SERVE_NODE_FLAGS: string[] };
    const child = spawn(BIN, ['serve', '--port', '0', '--state-dir', join(dir, 'serve-state')], {
      env: { ...baseEnv, FLOWMEND_STATE_DIR: '', FLOWMEND_API_URL: '' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      let stderr = '';
      child.stderr.setEncoding('utf8');
      await new Promise<void>((resolve, reject) => {
        child.stderr.on('data', (chunk: string) => {
          stderr += chunk;
          if (stderr.includes('listening on http://127.0.0.1:')) resolve();
        });
        child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
      });
      // The shell exec'd Node in its place: the process's own command line is Node's.
      const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
      expect(argv.slice(1, 1 + SERVE_NODE_FLAGS.length)).toEqual(SERVE_NODE_FLAGS);
      expect(argv.slice(1 + SERVE_NODE_FLAGS.length, 3 + SERVE_NODE_FLAGS.length)).toEqual([BIN, 'serve']);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('close', resolve));
    }
  });

  it('runs through a symlink elsewhere, as npm links bins', () => {
    const link = join(dir, 'flowmend');
    symlinkSync(BIN, link);
    const validated = program(['validate', hello], link);
    expect(validated.stdout).toContain('is valid');
    expect(validated.status).toBe(0);
  });

  it('says what to do, without a stack trace, in a checkout that was never built nor installed', () => {
    // A copy of bin/ alone: no dist/, and no node_modules above it to find tsx in.
    const bare = join(dir, 'bare', 'bin');
    cpSync(join(REPO, 'bin'), bare, { recursive: true });
    const text = program(['validate', hello], join(bare, 'flowmend.cjs'));
    expect(text.stderr).toContain('flowmend: not built (no dist/ here), and tsx (a dev dependency) is not installed');
    expect(text.stderr).toContain('run `npm ci` in');
    expect(text.stderr).not.toMatch(/\n\s+at /);
    expect(text.status).toBe(1);
    const json = program(['run', hello, '--output-format', 'json'], join(bare, 'flowmend.cjs'));
    expect(JSON.parse(json.stdout)).toMatchObject({ success: false, status: 'failed', error: expect.stringContaining('npm ci') });
    expect(json.status).toBe(1);
  });
});
