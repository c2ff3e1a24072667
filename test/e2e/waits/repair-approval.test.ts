import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Workflow, type WorkflowInput, WorkflowSchema } from '../../../functions/core/ir.ts';
import { runCli } from '../../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../../functions/hosts/lambda/repair.ts';
import { makeCliSandbox, runCliJson } from '../../support/cli-sandbox.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../../support/fake-anthropic.ts';

type Report = {
  run_id: string;
  status: string;
  result: Record<string, unknown>;
  errors: { code: string; message: string }[];
  repairs: { outcome: string; source?: string; version?: number; diff: string[]; tokens: { input: number; output: number } }[];
  waiting?: {
    kind: string;
    node_id?: string;
    repair?: { version?: number; source?: string; model?: string; reason: string; diff: string[]; tokens: { input: number; output: number }; cost_usd: number };
  };
};

const sandbox = makeCliSandbox('repair-approval');
let fake: FakeAnthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic();
});
afterAll(async () => {
  await fake.close();
  await sandbox.cleanup();
});

const cli = <T = Report>(argv: string[]) =>
  runCliJson<T>(sandbox.stateDir, argv, { makeRepairHandler: envRepairHandler({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.baseURL }) });

const count = (name: string): number => {
  const path = join(sandbox.dir, name);
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean).length : 0;
};

/** fetch (a side effect, counted) -> use (fails until repaired); the workflow asks for a person to approve an LLM's patch. */
const failing = (name: string): { path: string; workflow: WorkflowInput } => {
  const workflow: WorkflowInput = {
    repair: { approval: 'llm' },
    nodes: [
      { id: 'fetch', type: 'shell', params: { command: `echo run >> ${join(sandbox.dir, `${name}.fetch`)}; echo octocat` } },
      { id: 'use', type: 'shell', params: { command: 'exit 3' } },
    ],
    edges: [{ from: 'fetch', to: 'use' }],
    outputs: { out: { source: '${use.stdout}' } },
  };
  const path = join(sandbox.dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(workflow));
  return { path, workflow };
};

const proposeFix = (workflow: WorkflowInput, command: string): void => {
  const fixed: Workflow = WorkflowSchema.parse(structuredClone(workflow));
  const use = fixed.nodes.find((n) => n.id === 'use');
  if (use) use.params.command = command;
  fake.enqueue({ text: JSON.stringify({ workflow: fixed, reason: 'use echoes what fetch read' }), usage: { input_tokens: 900, output_tokens: 150 } });
};

describe('a repair held for a person ("repair": {"approval": "llm"})', () => {
  it('holds the LLM patch with its diff, reason, model, tokens and cost (exit 4); approve applies it and the run goes on from the failed node', async () => {
    const { path, workflow } = failing('approved');
    proposeFix(workflow, 'echo fixed ${fetch.stdout}');
    const held = await cli(['run', path]);
    expect(held.code).toBe(4);
    expect(held.json).toMatchObject({
      status: 'waiting',
      waiting: {
        kind: 'repair-approval',
        node_id: 'use',
        repair: { version: 1, source: 'llm', reason: 'use echoes what fetch read', tokens: { input: 900, output: 150 } },
      },
    });
    expect(held.json.waiting?.repair?.diff.join('\n')).toContain('echo fixed');
    expect(held.json.waiting?.repair?.cost_usd).toBeGreaterThan(0);
    expect(held.json.waiting?.repair?.model).toEqual(expect.any(String));
    let text = '';
    await runCli(['status', held.json.run_id, '--state-dir', sandbox.stateDir], { stdout: (t) => (text += t), stderr: () => {}, env: {} });
    expect(text).toContain('Proposed repair (workflow version 1, by llm');
    expect(text).toContain(`flowmend approve ${held.json.run_id}`);

    const applied = await cli(['approve', held.json.run_id]);
    expect(applied.code).toBe(0);
    expect(applied.json).toMatchObject({ status: 'succeeded', result: { out: 'fixed octocat' } });
    expect(applied.json.repairs).toEqual([expect.objectContaining({ outcome: 'applied', source: 'llm', version: 1 })]);
    expect(count('approved.fetch')).toBe(1);
    expect(fake.calls).toHaveLength(1);
  });

  it('rejected, the run fails (exit 3) with the proposal kept; a person then resumes it with a patch of their own', async () => {
    const { path, workflow } = failing('rejected');
    proposeFix(workflow, 'rm -rf /definitely-not');
    const held = await cli(['run', path]);
    const rejected = await cli(['approve', held.json.run_id, '--deny', '--comment', 'no rm in production']);
    expect(rejected.code).toBe(3);
    expect(rejected.json).toMatchObject({ status: 'failed', errors: [{ code: 'REPAIR_REJECTED' }] });
    expect(rejected.json.errors[0]?.message).toContain('no rm in production');
    expect(rejected.json.repairs).toEqual([expect.objectContaining({ outcome: 'rejected', version: 1 })]);
    expect(rejected.json.repairs[0]?.diff.join('\n')).toContain('rm -rf');

    const patched = WorkflowSchema.parse(structuredClone(workflow));
    const use = patched.nodes.find((n) => n.id === 'use');
    if (use) use.params.command = 'echo by hand ${fetch.stdout}';
    const patchPath = join(sandbox.dir, 'patched.json');
    writeFileSync(patchPath, JSON.stringify(patched));
    const resumed = await cli(['resume', held.json.run_id, '--workflow', patchPath]);
    expect(resumed.code).toBe(0);
    expect(resumed.json).toMatchObject({ status: 'succeeded', result: { out: 'by hand octocat' } });
    expect(resumed.json.repairs.map((r) => [r.outcome, r.source, r.version])).toEqual([
      ['rejected', 'llm', 1],
      ['applied', 'manual', 2],
    ]);
    expect(count('rejected.fetch')).toBe(1);
  });

  it('--repair-approval on the run holds a repair the workflow would apply; a rule-based fix is held only under "all"', async () => {
    const { workflow } = failing('flag');
    const unattended = { ...workflow, repair: undefined };
    const path = join(sandbox.dir, 'flag.json');
    writeFileSync(path, JSON.stringify(unattended));
    proposeFix(unattended, 'echo flagged');
    const held = await cli(['run', path, '--repair-approval', 'llm']);
    expect(held.json).toMatchObject({ status: 'waiting', waiting: { kind: 'repair-approval' } });
    expect((await cli(['approve', held.json.run_id])).json).toMatchObject({ status: 'succeeded', result: { out: 'flagged' } });

    // A typo the rules fix (no LLM call): applied under "llm", held under "all".
    const typo = join(sandbox.dir, 'typo.json');
    writeFileSync(
      typo,
      JSON.stringify({
        nodes: [
          { id: 'fetch', type: 'shell', params: { command: 'echo octocat' } },
          { id: 'use', type: 'shell', params: { command: 'echo ${fetch.stdot}' } },
        ],
        edges: [{ from: 'fetch', to: 'use' }],
      }),
    );
    const calls = fake.calls.length;
    expect((await cli(['run', typo, '--repair-approval', 'llm'])).json).toMatchObject({ status: 'succeeded', repairs: [{ source: 'rules' }] });
    const all = await cli(['run', typo, '--repair-approval', 'all']);
    expect(all.json).toMatchObject({ status: 'waiting', waiting: { kind: 'repair-approval', repair: { source: 'rules' } } });
    expect((await cli(['approve', all.json.run_id])).json).toMatchObject({ status: 'succeeded', result: { stdout: 'octocat' } });
    expect(fake.calls.length).toBe(calls);
  });
});
