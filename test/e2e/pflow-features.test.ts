import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { makeCatalog } from '../../functions/core/node-type.ts';
import { prepareRun } from '../../functions/core/prepare-run.ts';
import { loadWorkflowFile } from '../../functions/hosts/cli/workflow-file.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { fileRunners } from '../../functions/nodes/catalog.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { engineNodeSpecs } from '../../functions/nodes/workflow.ts';

// pflow's 2026 features through the real local host (the ASL, the handlers, real shell processes), from
// .pflow.md fixtures this file writes (issue 29).
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowmend-pflow-features-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runners = [shellRunner, transformRunner, ...fileRunners];

const runMarkdown = async (name: string, lines: string[], params: Record<string, unknown> = {}, store = new MemoryRunStore()) => {
  const path = join(dir, `${name}.pflow.md`);
  writeFileSync(path, lines.join('\n'));
  const loaded = await loadWorkflowFile(path);
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.issues));
  const prepared = prepareRun(
    { workflow: loaded.workflow, workflowName: name, params, repairEnabled: false, maxRepairs: 0 },
    makeCatalog([...runners, ...engineNodeSpecs]),
  );
  if (!prepared.ok) throw new Error(prepared.message);
  return new LocalHost({ store, runners, retryIntervalMs: 0 }).start({ ...prepared.spec, workspace: dir });
};

const step = (id: string, command: string, ...items: string[]) => [
  `### ${id}`,
  '',
  `Step ${id}.`,
  '',
  '- type: shell',
  ...items,
  '',
  '```shell command',
  command,
  '```',
  '',
];

describe('branches and ?? through the local host', () => {
  it('an on-error branch runs, and ?? takes the branch that ran (the failed node is absent to it, but its stderr is readable)', async () => {
    const report = await runMarkdown('coalesce', [
      '## Steps',
      ...step('primary', 'echo partial; echo down >&2; exit 3', '- on-error: backup'),
      ...step('backup', 'echo from backup', '- next: report'),
      ...step('report', 'echo "${primary.stdout ?? backup.stdout} after ${primary.stderr}"'),
      '## Outputs',
      '### value',
      'The value.',
      '- source: ${report.stdout}',
    ]);
    expect(report).toMatchObject({ status: 'succeeded', result: { value: 'from backup after down' } });
  });

  it("a dynamic index picks an item by another node's output", async () => {
    const report = await runMarkdown('dynamic-index', [
      '## Steps',
      ...step('list', `echo '["a","b","c"]'`),
      ...step('which', 'echo 2'),
      ...step('pick', 'echo ${list.stdout[${which.stdout}]}'),
    ]);
    expect(report).toMatchObject({ status: 'succeeded', result: { stdout: 'c' } });
  });

  it("an output whose ?? operands are all absent fails the run at the outputs (pflow's documentation: it should error)", async () => {
    const report = await runMarkdown('all-absent', [
      '## Steps',
      ...step('selector', 'echo go', '- next: fails'),
      ...step('never_run', 'echo never', '- next: end'),
      ...step('fails', 'exit 4', '- on-error: soak', '- next: end'),
      ...step('soak', 'echo soaked', '- next: end'),
      '## Outputs',
      '### content',
      'Nothing ran that has it.',
      '- source: ${never_run.stdout ?? fails.stdout}',
    ]);
    expect(report).toMatchObject({ status: 'failed', errors: [{ category: 'template', message: expect.stringContaining('no operand is present') }] });
  });
});
