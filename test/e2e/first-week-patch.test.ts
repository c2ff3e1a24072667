// What a new user trips on in their first week (issue 33, item 7): patching a run after an automatic repair,
// and turning repair on for a run started without it. Through the real `flowmend` bin and `flowmend serve`.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli as runCliInProcess } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { type CliResult, countLines, killStrayChildren, makeTempDir, parseJsonOutput } from '../support/cli-process.ts';
import { request, startServe, waitForRun } from '../support/serve-process.ts';

const dir = makeTempDir('first-week-patch');
const stateDir = join(dir, 'state');
afterAll(() => {
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The CLI's own code in this process (a process start costs seconds on a busy machine), wired as the bin wires
 * it (rules-only repair, as without an API key); `flowmend serve` below is the bin.
 */
const cli = async (args: string[], state = stateDir): Promise<CliResult> => {
  let stdout = '';
  let stderr = '';
  const code = await runCliInProcess([...args, '--state-dir', state], {
    stdout: (t) => (stdout += t),
    stderr: (t) => (stderr += t),
    env: {},
    hostOptions: { makeRepairHandler: envRepairHandler({}) },
  });
  return { code, signal: null, stdout, stderr };
};
type Report = { run_id: string; status: string; result: Record<string, unknown>; repairs: { source: string; outcome: string; reason: string }[] };

/** `send` has a side effect (a line in send.count); `fmt` reads a misspelt output (the rules repair it); `report` fails as written. */
const workflow = (report: string, send = `echo sent >> ${dir}/send.count; echo 42`) => ({
  nodes: [
    { id: 'send', type: 'shell', params: { command: send } },
    { id: 'fmt', type: 'shell', params: { command: 'echo value ${send.stdot}' } },
    { id: 'report', type: 'shell', params: { command: report } },
  ],
  edges: [
    { from: 'send', to: 'fmt' },
    { from: 'fmt', to: 'report' },
  ],
  outputs: { out: { source: '${report.stdout}' } },
});
const write = (name: string, value: unknown): string => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(value, null, 2));
  return path;
};

describe('a patch after an automatic repair', () => {
  it('show --workflow prints the repaired version; a patch made from the original file is carried onto it', async () => {
    const original = write('report.json', workflow('echo got ${fmt.stdout}; exit 3'));
    const failed = parseJsonOutput<Report>(await cli(['run', original, '--output-format', 'json']));
    expect(failed.status).toBe('failed');
    expect(failed.repairs.map((r) => r.outcome)).toEqual(['applied', 'failed']);

    const shown = await cli(['show', failed.run_id, '--workflow']);
    expect(shown.code).toBe(0);
    const current = JSON.parse(shown.stdout) as ReturnType<typeof workflow>;
    expect(current.nodes[1]?.params.command).toBe('echo value ${send.stdout}');
    const described = parseJsonOutput(await cli(['show', failed.run_id, '--workflow', '--output-format', 'json']));
    expect(described).toMatchObject({ success: true, run_id: failed.run_id, version: 1, source: 'rules' });

    // The person fixes `report` in the file they ran, which still has the typo the rules repaired.
    const fixed = write('report-fixed.json', workflow('echo got ${fmt.stdout}'));
    const resumed = await cli(['resume', failed.run_id, '--workflow', fixed, '--output-format', 'json']);
    const report = parseJsonOutput<Report>(resumed);
    expect(resumed.code, resumed.stdout).toBe(0);
    expect(report.result).toEqual({ out: 'got value 42' });
    expect(report.repairs.at(-1)).toMatchObject({ source: 'manual', reason: expect.stringContaining('made from version 0, carried onto version 1') });
    expect(countLines(join(dir, 'send.count'))).toBe(1);
  });

  it('refuses a patch from an earlier version that would run a completed side-effecting node again', async () => {
    const failed = parseJsonOutput<Report>(await cli(['run', write('frozen.json', workflow('exit 3')), '--output-format', 'json']));
    const rewrites = write('frozen-send.json', workflow('echo ok', `echo sent >> ${dir}/send.count; echo 43`));
    const refused = await cli(['resume', failed.run_id, '--workflow', rewrites]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/node 'send' already ran and has side effects/);
    expect(countLines(join(dir, 'send.count'))).toBe(2);
  });
});

describe('repair settings on resume', () => {
  it('--max-repairs N and --repair take effect on a run started with --no-repair', async () => {
    const failing = {
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'echo hi' } },
        { id: 'b', type: 'shell', params: { command: 'exit 5' } },
      ],
      edges: [{ from: 'a', to: 'b' }],
    };
    const started = parseJsonOutput<Report>(await cli(['run', write('failing.json', failing), '--no-repair', '--output-format', 'json']));
    expect(started.status).toBe('failed');
    expect(started.repairs).toEqual([]);
    const capped = await cli(['resume', started.run_id, '--max-repairs', '2']);
    expect(capped.stdout).toContain('Repairing workflow (attempt 1/2)');
    const turnedOn = await cli(['resume', started.run_id, '--repair']);
    expect(turnedOn.stdout).toContain('Repairing workflow (attempt 2/2)');
    const both = await cli(['resume', started.run_id, '--repair', '--no-repair']);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--repair or --no-repair, not both');
  });
});

describe('flowmend serve', () => {
  it('answers its root with the viewer, and GET /runs/{id}/workflow (show --workflow --api) with the repaired version', async () => {
    const serve = await startServe(join(dir, 'serve-state'));
    try {
      const root = await fetch(`${serve.url}/`, { redirect: 'manual' });
      expect(root.status).toBe(302);
      expect(root.headers.get('location')).toBe('/ui/');

      const started = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow: workflow('echo got ${fmt.stdout}') } });
      expect(started.status).toBe(202);
      const shown = await cli(['show', started.body.run_id, '--workflow', '--api', serve.url]);
      const deadline = Date.now() + 30_000;
      let current = JSON.parse(shown.stdout || '{}') as ReturnType<typeof workflow>;
      while (current.nodes?.[1]?.params.command !== 'echo value ${send.stdout}' && Date.now() < deadline) {
        current = (await request<{ workflow: ReturnType<typeof workflow> }>(serve.url, 'GET', `/runs/${started.body.run_id}/workflow`)).body.workflow;
      }
      expect(current.nodes[1]?.params.command).toBe('echo value ${send.stdout}');
      const missing = await cli(['show', 'no-such-run', '--workflow', '--api', serve.url]);
      expect(missing.code).toBe(2);

      // max_repairs alone in a resume's body turns repair on for a run started with `"repair": false`.
      const failing = {
        nodes: [{ id: 'b', type: 'shell', params: { command: 'exit 5' } }],
        edges: [],
      };
      const noRepair = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow: failing, repair: false } });
      expect(await waitForRun(serve.url, noRepair.body.run_id)).toMatchObject({ status: 'failed', repairs: [] });
      await request(serve.url, 'POST', `/runs/${noRepair.body.run_id}/resume`, { body: { max_repairs: 2 } });
      const repaired = (await waitForRun(serve.url, noRepair.body.run_id)) as { repairs: { outcome: string }[] };
      expect(repaired.repairs.map((r) => r.outcome)).toEqual(['failed']);
    } finally {
      await serve.stop();
    }
    expect(readFileSync(join(dir, 'send.count'), 'utf8')).toContain('sent');
  });
});
