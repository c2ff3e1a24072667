// bin/flowmend.cjs run as a program, as npm links it (node_modules/.bin/flowmend, `npx flowmend`): /bin/sh reads
// its second line and execs Node on it. Node 20 reads NODE_EXTRA_CA_CERTS before any JavaScript runs, and
// warns on stderr when the file cannot be read: the warning shows which commands kept the variable.
import { spawnSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTempDir, REPO } from '../../support/cli-process.ts';

const BIN = join(REPO, 'bin', 'flowmend.cjs');
const hello = join(REPO, 'examples', 'hello.json');
const dir = makeTempDir('bin-program');
const CA_WARNING = 'Ignoring extra certs';

const program = (args: string[], bin = BIN) =>
  spawnSync(bin, args, { encoding: 'utf8', env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'no-such-bundle.pem'), FLOWMEND_STATE_DIR: '' } });

describe('the flowmend bin run as a program', () => {
  it('starts `validate` without the extra CA certificates: it opens no connection', () => {
    const validated = program(['validate', hello]);
    expect(validated.stdout).toContain('is valid');
    expect(validated.status).toBe(0);
    // Nothing from the shell either: its line is read by /bin/sh and by Node, and neither may complain.
    expect(validated.stderr).toBe('');
  });

  it('keeps them for `validate --online` and for every other command, which may open TLS connections', () => {
    const online = program(['validate', hello, '--online']);
    expect(online.status).toBe(0);
    expect(online.stderr).toContain(CA_WARNING);
    const status = program(['status', 'no-such-run', '--state-dir', join(dir, 'state')]);
    expect(status.status).toBe(2);
    expect(status.stderr).toContain(CA_WARNING);
    expect(status.stderr).toContain("no run 'no-such-run'");
  });

  it('runs through a symlink elsewhere, as npm links bins', () => {
    const link = join(dir, 'flowmend');
    symlinkSync(BIN, link);
    const validated = program(['validate', hello], link);
    expect(validated.stdout).toContain('is valid');
    expect(validated.status).toBe(0);
  });
});
