// Where the CLI's output goes (bin/cli-main.ts writes to file descriptors 1 and 2 directly): a reader that
// goes away must not stop a run, and a descriptor another process left non-blocking still gets all of it.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { killStrayChildren, makeTempDir, parseJsonOutput, REPO, runCli, spawnCli, writeWorkflow } from '../../support/cli-process.ts';

const BIN = join(REPO, 'bin', 'flowmend.cjs');
const dir = makeTempDir('cli-output');

afterEach(() => killStrayChildren());

describe('the CLI writing its output', () => {
  it('finishes a run whose reader went away (`| head -1`), and the run is durable', async () => {
    const stateDir = join(dir, 'gone');
    const nodes = ['a', 'b', 'c'].map((id) => ({ id, type: 'shell' as const, params: { command: `sleep 0.2; echo ${id}` } }));
    const workflow = writeWorkflow(dir, 'three', {
      nodes,
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ],
    });
    const cli = spawnCli(['run', workflow], { stateDir });
    // The first progress line arrives, then the reader closes its end: every later write meets EPIPE.
    cli.child.stdout?.once('data', () => cli.child.stdout?.destroy());
    const ended = await cli.done;
    expect(ended.code).toBe(0);
    expect(ended.stderr).toBe('');
    const runs = parseJsonOutput<{ runs: { status: string }[] }>(await runCli(['runs', '--output-format', 'json'], { stateDir }));
    expect(runs.runs).toEqual([expect.objectContaining({ status: 'succeeded' })]);
  });

  it('writes all of a large JSON report to a non-blocking pipe that fills before its reader reads', () => {
    const stateDir = join(dir, 'nonblocking');
    const workflow = writeWorkflow(dir, 'big', {
      nodes: [{ id: 'big', type: 'shell', params: { command: "head -c 200000 /dev/zero | tr '\\0' x" } }],
      edges: [],
    });
    // Python makes a pipe (64 KB) with a non-blocking write end (Node cannot set O_NONBLOCK), runs the bin
    // with it as stdout, reads nothing for half a second, so the CLI's writes meet EAGAIN, then reads it all.
    const script = [
      'import fcntl, os, subprocess, sys, time',
      'r, w = os.pipe()',
      'fcntl.fcntl(w, fcntl.F_SETFL, fcntl.fcntl(w, fcntl.F_GETFL) | os.O_NONBLOCK)',
      'child = subprocess.Popen(sys.argv[1:], stdout=w)',
      'os.close(w)',
      'time.sleep(0.5)',
      "data = b''",
      'while True:',
      '    chunk = os.read(r, 65536)',
      '    if not chunk: break',
      '    data += chunk',
      'sys.stdout.buffer.write(data)',
      'sys.exit(child.wait())',
    ].join('\n');
    const result = spawnSync('python3', ['-c', script, BIN, 'run', workflow, '--output-format', 'json', '--state-dir', stateDir], {
      encoding: 'utf8',
      maxBuffer: 10_000_000,
    });
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    const report = JSON.parse(result.stdout) as { success: boolean; result: { stdout: string } };
    expect(report.success).toBe(true);
    expect(report.result.stdout).toHaveLength(200_000);
    // Its output went through Node's stream, which may still have held some of it at the command's end: so the
    // CLI closed the store and ended as usual (the WAL folded into the database), where it otherwise exits at once.
    expect(existsSync(join(stateDir, 'flowmend.db-wal'))).toBe(false);
  });
});
