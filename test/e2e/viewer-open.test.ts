import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { makeTempDir, waitForFile, writeWorkflow } from '../support/cli-process.ts';

describe('flowmend open and run --open', () => {
  let dir: string;
  let stateDir: string;
  let port: string;
  let stopServe: () => void;
  let served: Promise<number>;
  /** An opener that writes the URL it was given to a file: a real process in place of the browser. */
  let opener: string;

  const cli = async (argv: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> => {
    let stdout = '';
    let stderr = '';
    const code = await runCli([...argv, '--state-dir', stateDir], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env });
    return { code, stdout, stderr };
  };

  beforeAll(async () => {
    dir = makeTempDir('viewer-open');
    stateDir = join(dir, 'state');
    opener = join(dir, 'opener.sh');
    writeFileSync(opener, `#!/bin/sh\necho "$1" >> '${join(dir, 'opened')}'\n`);
    chmodSync(opener, 0o755);
    const stopped = new Promise<void>((resolve) => (stopServe = resolve));
    port = await new Promise<string>((resolve, reject) => {
      let seen = '';
      served = runCli(['serve', '--port', '0', '--state-dir', stateDir], {
        stdout: (text) => {
          seen += text;
          const match = /Run viewer: http:\/\/127\.0\.0\.1:(\d+)\/ui\//.exec(seen);
          if (match?.[1]) resolve(match[1]);
        },
        stderr: () => {},
        env: {},
        untilStopped: () => stopped,
      });
      served.then((code) => reject(new Error(`serve stopped (${code}): ${seen}`)), reject);
    });
  });

  afterAll(async () => {
    stopServe?.();
    await served;
    rmSync(dir, { recursive: true, force: true });
  });

  it('run --open hands the new run page of the serve on --port to the opener; open prints it when there is no opener', async () => {
    const workflow = writeWorkflow(dir, 'one', { nodes: [{ id: 'a', type: 'transform', params: { expression: '"hi"' } }] });
    const run = await cli(['run', workflow, '--open', '--port', port, '--output-format', 'json'], { FLOWMEND_OPENER: opener });
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { run_id: string };
    const url = `http://127.0.0.1:${port}/ui/runs/${report.run_id}`;
    await waitForFile(join(dir, 'opened'), 'the opener to be called');
    expect(readFileSync(join(dir, 'opened'), 'utf8').trim()).toBe(url);
    expect(run.stderr).toContain(`Opened ${url}`);

    const open = await cli(['open', report.run_id, '--port', port], { FLOWMEND_OPENER: 'none' });
    expect(open).toMatchObject({ code: 0, stdout: `Run page: ${url}\n` });
    const page = await fetch(url);
    expect(page.status).toBe(200);
  });

  it('open refuses a run that does not exist, saying where to look', async () => {
    const open = await cli(['open', 'no-such-run', '--port', port], { FLOWMEND_OPENER: 'none' });
    expect(open.code).toBe(2);
    expect(open.stderr).toContain("no run 'no-such-run'");
  });
});
