// serve's command helper (functions/hosts/local/command-helper.ts): shell commands start from a small process
// of its own, which holds nothing of the engine's, and a helper that dies leaves no command running unseen.
// That a command records the same either way is test/nodes/shell.test.ts, whose every case runs both ways.
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunContext, RunnerResult } from '../../../functions/core/node-type.ts';
import { CommandHelper, findCommandHelperFile } from '../../../functions/hosts/local/command-helper.ts';
import { makeShellRunner } from '../../../functions/nodes/shell.ts';
import { ShellParamsSchema } from '../../../functions/nodes/shell-spec.ts';
import { processGone } from '../../support/process-state.ts';

const context: RunContext = { runId: 'run-helper', nodeId: 'sh', seq: 1, cacheKey: 'k' };
const helpers: CommandHelper[] = [];
const started = (onStopped?: (message: string) => void): CommandHelper => {
  const file = findCommandHelperFile();
  expect(file, 'dist/command-helper.cjs is missing: run `npm run build` (npm test does)').toBeDefined();
  const helper = new CommandHelper(file, onStopped);
  helpers.push(helper);
  return helper;
};
afterEach(() => {
  for (const helper of helpers.splice(0)) helper.close();
});
const runWith = (helper: CommandHelper, params: Record<string, unknown>): Promise<RunnerResult> =>
  makeShellRunner({ spawnCommand: helper.spawn }).run(ShellParamsSchema.parse(params), context);

describe('the command helper', () => {
  it("starts commands from its own process, whose environment holds nothing of the engine's", async () => {
    // A canary in this process's environment, as an engine credential would be: the helper starts without it.
    process.env.FLOWMEND_TEST_CANARY_SECRET = 'canary-7d1f0c';
    try {
      const helper = started();
      const result = await runWith(helper, { command: 'echo "$PPID"; cat /proc/$PPID/environ | tr "\\0" "\\n"; echo "[${FLOWMEND_TEST_CANARY_SECRET}]"' });
      expect(result.kind).toBe('ok');
      const [ppid, ...rest] = String(result.outputs?.stdout).split('\n');
      expect(Number(ppid)).toBe(helper.pid);
      expect(Number(ppid)).not.toBe(process.pid);
      const cmdline = readFileSync(`/proc/${helper.pid}/cmdline`, 'utf8').split('\0');
      expect(cmdline.at(-2)).toMatch(/command-helper\.cjs$/);
      // A small young generation and no V8 helper threads (a smaller process forks faster), none of serve's flags.
      expect(cmdline.slice(1, -2)).toEqual(['--max-semi-space-size=1', '--single-threaded']);
      // Its own environment holds only what fork adds for the channel; the command's is the one the runner built.
      expect(rest.at(-1)).toBe('[]');
      expect(
        rest.slice(0, -1).every((line) => /^NODE_CHANNEL_(FD|SERIALIZATION_MODE)=/.test(line)),
        rest.join('\n'),
      ).toBe(true);
      expect(String(result.outputs?.stdout)).not.toContain('canary-7d1f0c');
    } finally {
      delete process.env.FLOWMEND_TEST_CANARY_SECRET;
    }
  });

  it('ends a command whose helper died, fails its node with COMMAND_LOST, and starts the next ones itself', async () => {
    const warnings: string[] = [];
    const helper = started((message) => warnings.push(message));
    const pending = runWith(helper, { command: 'echo "$$"; sleep 30' });
    // The command is running (its shell has printed its pid to the pipe the helper reads); then the helper dies.
    let pid: number | undefined;
    for (let tries = 0; tries < 200 && pid === undefined; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      const children = helper.pid === undefined ? '' : readFileSync(`/proc/${helper.pid}/task/${helper.pid}/children`, 'utf8').trim();
      if (children) pid = Number(children.split(' ')[0]);
    }
    expect(pid).toBeDefined();
    process.kill(helper.pid as number, 'SIGKILL');
    const result = await pending;
    expect(result).toMatchObject({ kind: 'failed', error: { code: 'COMMAND_LOST', message: expect.stringContaining('the command helper stopped (SIGKILL)') } });
    expect(await processGone(pid as number)).toBe(true);
    expect(warnings).toEqual(['the command helper stopped (SIGKILL)']);
    // From now on commands start from this process, and run as before.
    const next = await runWith(helper, { command: 'echo "$PPID"' });
    expect(next).toMatchObject({ kind: 'ok', outputs: { stdout: String(process.pid) } });
  });

  it('says nothing to the runners of commands still running when serve stops it: their runs stay running', async () => {
    const helper = started();
    const outcome = Promise.race([
      // Its timeout ends the command's group after the test (the runner itself then waits for good, as serve's process ends).
      runWith(helper, { command: 'sleep 30', timeout_s: 2 }).then(() => 'settled'),
      new Promise((resolve) => setTimeout(() => resolve('still running'), 800)),
    ]);
    await new Promise((resolve) => setTimeout(resolve, 200));
    helper.close();
    expect(await outcome).toBe('still running');
  });

  it('starts commands from this process where no helper is built', async () => {
    const helper = new CommandHelper(undefined);
    const result = await runWith(helper, { command: 'echo "$PPID"' });
    expect(result).toMatchObject({ kind: 'ok', outputs: { stdout: String(process.pid) } });
    expect(helper.pid).toBeUndefined();
  });
});
