import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunReport } from '../../functions/core/run-report.ts';
import { killStrayChildren, makeTempDir, parseJsonOutput, REPO, runCli } from '../support/cli-process.ts';

// pflow's .pflow.md through the real bin: run, validate and resume --workflow (issue 29).
const dir = makeTempDir('pflow-md-cli');
const stateDir = join(dir, 'state');
const greet = join(REPO, 'test', 'fixtures', 'pflow-md', 'greet.pflow.md');
afterAll(() => killStrayChildren());

const cli = (...args: string[]) => runCli(args, { stateDir });
const write = (name: string, lines: string[]): string => {
  const path = join(dir, name);
  writeFileSync(path, lines.join('\n'));
  return path;
};
type Issues = { issues: { path: string; code: string; message: string; line?: number; column?: number; hint?: string; severity: string }[] };

describe('flowmend with a .pflow.md', () => {
  it('runs it like a JSON workflow: inputs, steps in order, declared outputs', async () => {
    const out = await cli('run', greet, 'name=Ada', '--output-format', 'json');
    expect(out.code, out.stderr).toBe(0);
    expect(parseJsonOutput<RunReport>(out)).toMatchObject({ status: 'succeeded', workflow: 'greet', result: { loud: 'HELLO ADA' } });
  });

  it('validate names the file, line and column of a format error, and says what the format expects', async () => {
    const broken = write('broken.pflow.md', ['# Broken', '', '## Steps', '', '### fetch', '', 'Fetch it.', '', '- url: https://example.com']);
    const [json, text] = await Promise.all([cli('validate', broken, '--output-format', 'json'), cli('validate', broken)]);
    expect(json.code).toBe(2);
    expect(parseJsonOutput<Issues>(json).issues).toEqual([
      expect.objectContaining({
        path: `${broken}:5:1`,
        line: 5,
        column: 1,
        message: "step 'fetch' has no type",
        hint: expect.stringContaining('- type: shell'),
      }),
    ]);
    expect(text.stdout).toContain(`at ${broken}:5:1`);
  });

  it('validate places an IR problem (a template naming a missing output) at the line of its param', async () => {
    const bad = write('bad-template.pflow.md', [
      '## Steps',
      '### a',
      'A.',
      '- type: shell',
      '- command: echo a',
      '### b',
      'B.',
      '- type: shell',
      '',
      '```shell command',
      'echo ${a.stdot}',
      '```',
    ]);
    const out = await cli('validate', bad, '--output-format', 'json');
    expect(out.code).toBe(2);
    expect(parseJsonOutput<Issues>(out).issues).toContainEqual(
      expect.objectContaining({ line: 11, path: `${bad}:11:1 nodes[1].params.command`, hint: expect.stringContaining('${a.stdout}') }),
    );
  });

  it('resume --workflow takes a fixed .pflow.md, and the completed steps replay', async () => {
    const steps = (second: string) => [
      '## Steps',
      '### first',
      'First.',
      '- type: shell',
      '- command: echo one',
      '### second',
      'Second.',
      '- type: shell',
      `- command: ${second}`,
    ];
    const failing = await cli('run', write('flaky.pflow.md', steps('exit 3')), '--no-repair', '--output-format', 'json');
    expect(failing.code).toBe(1);
    const runId = parseJsonOutput<RunReport>(failing).run_id;
    const resumed = await cli('resume', runId, '--workflow', write('fixed.pflow.md', steps('echo two')), '--output-format', 'json');
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(parseJsonOutput<RunReport>(resumed)).toMatchObject({ status: 'succeeded', metrics: { nodes_cached: 1 } });
  });
});
