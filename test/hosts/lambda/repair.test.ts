import { beforeEach, describe, expect, it } from 'vitest';
import type { Workflow } from '../../../functions/core/ir.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import type { RepairLlm, RepairLlmRequest } from '../../../functions/core/repair/index.ts';
import { createRun } from '../../../functions/core/run-lifecycle.ts';
import type { NodeRecord, RunError } from '../../../functions/core/run-model.ts';
import { makeRepairHandler } from '../../../functions/hosts/lambda/repair.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';
import { wf } from '../../core/repair/support.ts';
import { aNodeRecord } from '../../support/builders.ts';

const RUN = 'run-repair-1';
const OWNER = 'owner-1';
const NOW = 1_700_000_000_000;

/** A RepairLlm that answers from a script and records the prompts it was given. */
const scriptedLlm = (replies: string[]): RepairLlm & { requests: RepairLlmRequest[] } => {
  const requests: RepairLlmRequest[] = [];
  return {
    requests,
    async complete(request) {
      requests.push(request);
      const text = replies.shift();
      if (text === undefined) throw new Error('no scripted reply left');
      return { text, usage: { input_tokens: 1000, output_tokens: 200 } };
    },
  };
};

const workflow = wf({
  nodes: [
    { id: 'a', type: 'shell', params: { command: 'echo hi', timeout_s: 5 } },
    { id: 'b', type: 'shell', params: { command: 'grep -q nothing-here' } },
  ],
  edges: [{ from: 'a', to: 'b' }],
});

const step = (seq: number, nodeId: string, status: NodeRecord['status'], outputs: Record<string, unknown>): NodeRecord =>
  aNodeRecord({
    runId: RUN,
    seq,
    nodeId,
    status,
    action: status === 'completed' ? 'default' : 'error',
    outputs,
    startedAt: NOW,
    finishedAt: NOW,
    durationMs: 1,
  });

let store: MemoryRunStore;

const setUp = async (ir: Workflow, lastError: RunError | undefined, steps: NodeRecord[] = []) => {
  const run = await createRun(store, {
    runId: RUN,
    workflow: ir,
    workflowName: 'wf',
    params: {},
    owner: { id: OWNER, since: NOW },
    repairEnabled: true,
    maxRepairs: 3,
    now: NOW,
  });
  for (const s of steps) await store.putRecord(s);
  run.latest = Object.fromEntries(steps.map((s) => [s.nodeId, s.seq]));
  run.seq = steps.length;
  if (lastError) run.lastError = lastError;
  run.repairAttempts = 1;
  await store.putRun(run, { ownerId: OWNER });
};

const event = (failedNode: string) => ({ kind: 'repair', runId: RUN, owner: OWNER, failedNode, attempt: 1 });

const exitError: RunError = { node_id: 'b', category: 'execution_failure', code: 'EXIT_NONZERO', message: 'Command exited with 1', fixable: true };

const fixedB = structuredClone(workflow);
(fixedB.nodes[1] as Workflow['nodes'][number]).params.command = 'grep -q hi';

describe('makeRepairHandler', () => {
  beforeEach(() => {
    store = new MemoryRunStore({ now: () => NOW });
  });

  const handlerWith = (llm?: RepairLlm) =>
    makeRepairHandler({ store, catalog: builtinCatalog, ...(llm ? { llm } : {}), model: 'claude-haiku-4-5', now: () => NOW + 5 });

  it('fixes a template typo with the rules alone: no LLM call, one new IR version with a diff', async () => {
    const [first] = workflow.nodes;
    if (!first) throw new Error('the fixture has no first node');
    const ir = wf({ ...workflow, nodes: [first, { id: 'b', type: 'shell', params: { command: 'echo ${a.stdot}' } }] });
    await setUp(
      ir,
      {
        node_id: 'b',
        category: 'template',
        code: 'TEMPLATE_UNRESOLVED',
        message: 'Unresolved template',
        fixable: true,
        details: { unresolved: ['${a.stdot}'] },
      },
      [step(1, 'a', 'completed', { stdout: 'hi', stderr: '', exit_code: 0 })],
    );
    const llm = scriptedLlm([]);
    const report = await handlerWith(llm)(event('b'));
    expect(report).toEqual({ applied: true, message: 'Deterministic repair: nodes[1].params.command: ${a.stdot} -> ${a.stdout}' });
    expect(llm.requests).toHaveLength(0);
    const item = await store.getIrVersion(RUN, 1);
    expect(item).toMatchObject({
      version: 1,
      source: 'rules',
      nodesChanged: ['b'],
      diff: ['nodes[1].params.command: ${a.stdot} -> ${a.stdout}'],
      createdAt: NOW + 5,
    });
    expect(item?.usage).toBeUndefined();
    expect(item?.ir.nodes[1]?.params.command).toBe('echo ${a.stdout}');
    expect((await store.getRun(RUN))?.irVersion).toBe(0);
  });

  it('asks the LLM when no rule fits, and stores its proposal with usage and cost', async () => {
    await setUp(workflow, exitError, [
      step(1, 'a', 'completed', { stdout: 'hi', stderr: '', exit_code: 0 }),
      step(2, 'b', 'failed', { stdout: '', stderr: '', exit_code: 1 }),
    ]);
    const llm = scriptedLlm([JSON.stringify({ workflow: fixedB, reason: 'grep for the word a prints.' })]);
    const report = await handlerWith(llm)(event('b'));
    expect(report).toEqual({ applied: true, message: 'grep for the word a prints.' });
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.model).toBe('claude-haiku-4-5');
    expect(llm.requests[0]?.prompt).toContain('- a (shell, side effects: yes, action: default)');
    const item = await store.getIrVersion(RUN, 1);
    expect(item).toMatchObject({ source: 'llm', nodesChanged: ['b'], diff: ['nodes[1].params.command: "grep -q nothing-here" -> "grep -q hi"'] });
    expect(item?.usage).toEqual({ model: 'claude-haiku-4-5', input_tokens: 1000, output_tokens: 200, cost_usd: 0.002 });
  });

  it('makes one LLM call per attempt: a refused proposal comes back with its problems and usage, and nothing is written', async () => {
    await setUp(workflow, exitError, [step(1, 'a', 'completed', { stdout: 'hi' })]);
    const llm = scriptedLlm(['I cannot help with that.', 'never asked for']);
    const report = await handlerWith(llm)(event('b'));
    expect(report.applied).toBe(false);
    expect(report.message).toMatch(/^the LLM's repair proposal for node '[^']+' was refused \(1200 tokens\): the reply is neither a bare JSON object/);
    expect(report.problems).toEqual([expect.stringMatching(/^the reply is neither a bare JSON object/)]);
    expect(report.usage).toEqual({ model: 'claude-haiku-4-5', input_tokens: 1000, output_tokens: 200, cost_usd: 0.002 });
    expect(llm.requests).toHaveLength(1);
    expect(await store.getIrVersion(RUN, 1)).toBeUndefined();
  });

  it('tells the next attempt what was wrong with the last refused proposal of this workflow version', async () => {
    await setUp(workflow, exitError, [step(1, 'a', 'completed', { stdout: 'hi' })]);
    const run = await store.getRun(RUN);
    if (!run) throw new Error('no run');
    run.repairs = [
      { attempt: 1, outcome: 'refused', irVersion: 0, nodeId: 'b', reason: 'refused', problems: [`node 'a' lost its param "timeout_s"`], at: NOW },
    ];
    run.repairAttempts = 2;
    await store.putRun(run, { ownerId: OWNER });
    const llm = scriptedLlm([`\`\`\`json\n${JSON.stringify({ workflow: fixedB, reason: 'fix' })}\n\`\`\``]);
    const report = await handlerWith(llm)({ ...event('b'), attempt: 2 });
    expect(report.applied).toBe(true);
    expect(llm.requests).toHaveLength(1);
    expect(llm.requests[0]?.prompt).toContain(`## Your previous reply was refused\n- node 'a' lost its param "timeout_s"`);
    expect((await store.getIrVersion(RUN, 1))?.usage).toMatchObject({ input_tokens: 1000, output_tokens: 200 });
  });

  it('refuses a proposal that edits a completed node with side effects', async () => {
    await setUp(workflow, exitError, [step(1, 'a', 'completed', { stdout: 'hi' })]);
    const editsA = structuredClone(fixedB);
    (editsA.nodes[0] as Workflow['nodes'][number]).params.command = 'echo nothing-here';
    const llm = scriptedLlm([JSON.stringify({ workflow: editsA, reason: 'x' })]);
    const report = await handlerWith(llm)(event('b'));
    expect(report.applied).toBe(false);
    expect(report.message).toContain("node 'a' already ran and has side effects, so it is frozen");
    expect(report.problems).toContainEqual(expect.stringContaining("node 'a' already ran and has side effects, so it is frozen"));
  });

  it('says an LLM repair needs ANTHROPIC_API_KEY when there is no LLM and no rule fits', async () => {
    await setUp(workflow, exitError, [step(1, 'a', 'completed', { stdout: 'hi' })]);
    const report = await handlerWith()(event('b'));
    expect(report).toEqual({ applied: false, message: "an LLM repair needs ANTHROPIC_API_KEY; the rules found no fix for node 'b'" });
  });

  it('repairs static validation issues before any node ran (failedNode "")', async () => {
    const broken = wf({ nodes: [{ id: 'a', type: 'shell', params: { comand: 'echo hi' } }] });
    await setUp(broken, { category: 'validation', code: 'INVALID_WORKFLOW', message: 'the workflow does not validate', fixable: true });
    const report = await handlerWith()(event(''));
    expect(report).toEqual({ applied: true, message: 'Deterministic repair: nodes[0].params: comand -> command' });
    expect((await store.getIrVersion(RUN, 1))?.ir.nodes[0]?.params).toEqual({ command: 'echo hi' });
  });

  it('reports the version already written when it is called again for the same repair', async () => {
    await setUp(workflow, exitError, [step(1, 'a', 'completed', { stdout: 'hi' })]);
    const llm = scriptedLlm([JSON.stringify({ workflow: fixedB, reason: 'first' })]);
    const handle = handlerWith(llm);
    await handle(event('b'));
    expect(await handle(event('b'))).toEqual({ applied: true, message: 'first' });
    expect(llm.requests).toHaveLength(1);
  });

  it('refuses an event from an execution that no longer owns the run', async () => {
    await setUp(workflow, exitError);
    await expect(handlerWith()({ ...event('b'), owner: 'someone-else' })).rejects.toMatchObject({ name: 'StaleRunError' });
  });

  it('refuses an event it cannot read', async () => {
    await expect(handlerWith()({ kind: 'repair', runId: RUN })).rejects.toMatchObject({ name: 'InvalidInputError' });
  });
});
