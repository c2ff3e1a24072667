import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../functions/core/run-report.ts';
import {
  blockingCommand,
  killStrayChildren,
  makeTempDir,
  parseJsonOutput,
  REPO,
  runCli,
  spawnCli,
  waitForFile,
  writeWorkflow,
} from '../support/cli-process.ts';

const dir = makeTempDir('cli');
const stateDir = join(dir, 'state');
const hello = join(REPO, 'examples', 'hello.json');
afterAll(async () => {
  killStrayChildren();
  writeFileSync(join(dir, 'go'), '');
});

const cli = (...args: string[]) => runCli(args, { stateDir });

const failing = writeWorkflow(dir, 'failing', {
  nodes: [
    { id: 'ok', type: 'shell', params: { command: 'echo fine' } },
    { id: 'boom', type: 'shell', params: { command: 'echo broken >&2; exit 4' } },
  ],
  edges: [{ from: 'ok', to: 'boom' }],
});
const needsInput = writeWorkflow(dir, 'needs-input', {
  inputs: { who: { type: 'string', description: 'who to greet' } },
  nodes: [{ id: 'greet', type: 'shell', params: { command: 'echo hi ${who}' } }],
});
const invalid = writeWorkflow(dir, 'invalid', {
  nodes: [
    { id: 'a', type: 'shell', params: { command: 'echo a' } },
    { id: 'b', type: 'shell', params: { command: 'echo ${a.stdot}' } },
  ],
  edges: [{ from: 'a', to: 'b' }],
});

describe('flowmend run', () => {
  it('prints the JSON report of a successful run and exits 0', async () => {
    const out = await cli('run', hello, 'name=Ada', '--output-format', 'json');
    expect(out.code, out.stderr).toBe(0);
    const report = parseJsonOutput<RunReport>(out);
    expect(report).toMatchObject({
      success: true,
      status: 'succeeded',
      run_id: expect.any(String),
      result: { loud: 'HELLO ADA', length: 9 },
      errors: [],
      warnings: [],
      repairs: [],
      metrics: { nodes_executed: 3, nodes_cached: 0, duration_ms: expect.any(Number), llm: { input_tokens: 0, output_tokens: 0, cost_usd: 0 } },
    });
    expect(report.steps.map((s) => [s.node_id, s.status, s.cached, s.repaired, s.interrupted, typeof s.duration_ms])).toEqual([
      ['greet', 'completed', false, false, false, 'number'],
      ['shout', 'completed', false, false, false, 'number'],
      ['count', 'completed', false, false, false, 'number'],
    ]);
  });

  it('exits 1 when the run fails, with the failing node, category, message and fixable in errors', async () => {
    const out = await cli('run', failing, '--no-repair', '--output-format', 'json');
    expect(out.code, out.stderr).toBe(1);
    const report = parseJsonOutput<RunReport>(out);
    expect(report).toMatchObject({ success: false, status: 'failed', result: {}, repairs: [] });
    expect(report.errors).toEqual([
      expect.objectContaining({ node_id: 'boom', category: expect.any(String), message: expect.stringContaining('exit code 4'), fixable: true }),
    ]);
    expect(report.steps.map((s) => `${s.node_id}:${s.status}`)).toEqual(['ok:completed', 'boom:failed']);
  });

  it('answers bad usage with exit 2 and a message that says what to do', async () => {
    const [unknownFlag, missingInput, badFormat, unknownCommand, noWorkflow] = await Promise.all([
      cli('run', hello, '--verbose'),
      cli('run', needsInput),
      cli('run', hello, '--output-format', 'xml'),
      cli('launch', hello),
      cli('run'),
    ]);
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain("Unknown option '--verbose'");
    expect(unknownFlag.stderr).toContain('Usage:');
    expect(missingInput.code).toBe(2);
    expect(missingInput.stderr).toContain("missing required input 'who' (who to greet): pass who=<string>");
    expect(badFormat.code).toBe(2);
    expect(badFormat.stderr).toContain('--output-format is "text" or "json"');
    expect(unknownCommand.code).toBe(2);
    expect(unknownCommand.stderr).toContain("unknown command 'launch'; commands: run, resume, status, show, runs, validate");
    expect(noWorkflow.code).toBe(2);
    expect(noWorkflow.stderr).toContain('needs a workflow file, e.g. flowmend run examples/hello.json');
    for (const out of [unknownFlag, missingInput, badFormat, unknownCommand, noWorkflow]) expect(out.stdout).toBe('');
  });
});

describe('flowmend status and runs from a second process while a run is in progress', () => {
  it('shows the running run and its node in flight, then the run finishes normally', async () => {
    const wf = writeWorkflow(dir, 'slow', {
      nodes: [
        { id: 'first', type: 'shell', params: { command: 'echo one' } },
        { id: 'wait', type: 'shell', params: { command: blockingCommand(dir, 'wait', { countFirst: true }) } },
      ],
      edges: [{ from: 'first', to: 'wait' }],
    });
    const running = spawnCli(['run', wf], { stateDir });
    await waitForFile(join(dir, 'wait.started'), 'the blocking node to start');

    const runs = await cli('runs', '--output-format', 'json');
    expect(runs.code, runs.stderr).toBe(0);
    const listed = parseJsonOutput<{ success: boolean; runs: { run_id: string; status: string; workflow: string }[] }>(runs);
    const mine = listed.runs.find((r) => r.workflow === 'slow');
    expect(mine).toMatchObject({ status: 'running' });
    const runId = mine?.run_id as string;

    const [statusJson, statusText] = await Promise.all([cli('status', runId, '--output-format', 'json'), cli('status', runId)]);
    expect(statusJson.code, statusJson.stderr).toBe(0);
    const report = parseJsonOutput<RunReport>(statusJson);
    expect(report).toMatchObject({ success: false, status: 'running', run_id: runId, current: { node_id: 'wait' } });
    expect(report.steps.map((s) => `${s.node_id}:${s.status}`)).toEqual(['first:completed']);
    expect(statusText.code).toBe(0);
    expect(statusText.stdout).toContain(`Run ${runId} (slow): running`);
    expect(statusText.stdout).toMatch(/ {2}wait\.\.\. running since/);

    writeFileSync(join(dir, 'go'), '');
    const finished = await running.done;
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stdout).toContain('Executing workflow (2 nodes):');
    expect(finished.stdout).toMatch(/ {2}first\.\.\. ✓ \d+\.\ds/);
    expect(finished.stdout).toMatch(/ {2}wait\.\.\. ✓ \d+\.\ds/);
    expect(finished.stdout).toContain('✓ Workflow completed');
    expect(finished.stdout).toContain(`Run: ${runId}`);

    const after = parseJsonOutput<RunReport>(await cli('status', runId, '--output-format', 'json'));
    expect(after).toMatchObject({ success: true, status: 'succeeded' });
  });

  it('exits 2 for a run id the state dir does not have', async () => {
    const out = await cli('status', 'no-such-run');
    expect(out.code).toBe(2);
    expect(out.stderr).toContain("no run 'no-such-run'");
    expect(out.stderr).toContain('flowmend runs');
  });
});

describe('flowmend validate', () => {
  it('exits 0 for a valid workflow and 2 for an invalid one, with issues as data', async () => {
    const [valid, bad, missing] = await Promise.all([
      cli('validate', hello),
      cli('validate', invalid, '--output-format', 'json'),
      cli('validate', join(dir, 'absent.json')),
    ]);
    expect(valid.code, valid.stderr).toBe(0);
    expect(valid.stdout).toContain('is valid');
    expect(bad.code).toBe(2);
    const result = parseJsonOutput<{ success: boolean; valid: boolean; issues: { path: string; code: string; message: string; hint?: string }[] }>(bad);
    expect(result).toMatchObject({ success: false, valid: false });
    expect(result.issues).toContainEqual(
      expect.objectContaining({ path: expect.stringContaining('nodes[1].params.command'), hint: expect.stringContaining('stdout') }),
    );
    expect(missing.code).toBe(2);
    expect(missing.stdout).toContain('cannot read workflow file');
    expect(missing.stdout).toContain('no such file');
  });
});
