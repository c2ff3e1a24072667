import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import { runCli } from '../../functions/hosts/cli/commands.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import {
  blockingCommand,
  countLines,
  killShellGroup,
  killStrayChildren,
  makeTempDir,
  spawnCli,
  spawnCrashDriver,
  waitForFile,
  writeWorkflow,
} from '../support/cli-process.ts';
import { runCliJson } from '../support/cli-sandbox.ts';

// Nested workflows (issue 14 item 4): each workflow node runs its child as a child run with its own
// checkpoints, through the real local host, the real ASL, real shell processes and SQLite on disk.
const dir = makeTempDir('nested');
afterAll(() => {
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

type Report = RunReport & { children?: (RunReport & { node_id: string })[] };

/** The CLI in this process, JSON out, on a state dir, with the rules-then-LLM repair (no API key: rules only). */
const cli = (stateDir: string, argv: string[]) =>
  runCliJson<Report & { issues?: { code: string; message: string; path: string; hint?: string }[] }>(stateDir, argv, {
    makeRepairHandler: envRepairHandler({}),
  });

/** A shell node that appends a line to its own counter file (a real side effect), then prints `echo`. */
const counted = (id: string, where: string, echo: string) => ({
  id,
  type: 'shell',
  params: { command: `echo ran >> ${join(where, `${id}.count`)}; echo ${echo}` },
});
const count = (where: string, id: string): number =>
  existsSync(join(where, `${id}.count`))
    ? readFileSync(join(where, `${id}.count`), 'utf8')
        .split('\n')
        .filter(Boolean).length
    : 0;

/** Child: `c1` shouts its input, `c2` repeats it; the child outputs `shout`. */
const child = (where: string, c2Template = '${c1.stdout}') => ({
  inputs: { greeting: { type: 'string' as const, required: true } },
  nodes: [
    { ...counted('c1', where, '"${greeting}"'), params: { command: `echo ran >> ${join(where, 'c1.count')}; echo "\${greeting}" | tr a-z A-Z` } },
    { ...counted('c2', where, ''), params: { command: `echo ran >> ${join(where, 'c2.count')}; echo "${c2Template}!"` } },
  ],
  edges: [{ from: 'c1', to: 'c2' }],
  outputs: { shout: { source: '${c2.stdout}' } },
});

/** Parent: `p1` says hello, `sub` runs the child on it, `p2` prints the child's shout. */
const parent = (where: string, sub: Record<string, unknown>) => ({
  nodes: [
    counted('p1', where, 'hello'),
    { id: 'sub', type: 'workflow', params: { param_mapping: { greeting: '${p1.stdout}' }, output_mapping: { shout: 'loud' }, ...sub } },
    { ...counted('p2', where, ''), params: { command: `echo ran >> ${join(where, 'p2.count')}; echo "got \${sub.loud}"` } },
  ],
  edges: [
    { from: 'p1', to: 'sub' },
    { from: 'sub', to: 'p2' },
  ],
  outputs: { said: { source: '${p2.stdout}' } },
});

describe('workflow node: a child run', () => {
  it('runs a child from a workflow_ref file and maps its inputs and outputs; status nests the child run', async () => {
    const where = makeTempDir('nested-ref');
    writeWorkflow(where, 'child', child(where));
    const path = writeWorkflow(where, 'parent', parent(where, { workflow_ref: './child.json' }));
    const stateDir = join(where, 'state');
    const { code, json } = await cli(stateDir, ['run', path]);
    expect(code, JSON.stringify(json)).toBe(0);
    expect(json.result).toEqual({ said: 'got HELLO!' });
    expect(json.children).toHaveLength(1);
    const sub = json.children?.[0];
    expect(sub).toMatchObject({ node_id: 'sub', status: 'succeeded', result: { shout: 'HELLO!' }, parent: { run_id: json.run_id, node_id: 'sub' } });
    expect(sub?.steps.map((s) => s.node_id)).toEqual(['c1', 'c2']);
    const status = await cli(stateDir, ['status', json.run_id]);
    expect(status.json.children?.[0]?.run_id).toBe(sub?.run_id);

    // `runs` lists the top-level run with its child counted; `runs --all` lists the child too, naming its parent.
    type Listed = { runs: { run_id: string; children: number; parent_run_id?: string }[] };
    const top = (await cli(stateDir, ['runs'])).json as unknown as Listed;
    expect(top.runs).toEqual([expect.objectContaining({ run_id: json.run_id, children: 1 })]);
    expect(top.runs[0]).not.toHaveProperty('parent_run_id');
    const all = (await cli(stateDir, ['runs', '--all'])).json as unknown as Listed;
    expect(all.runs.map((r) => [r.run_id, r.parent_run_id, r.children])).toEqual(
      expect.arrayContaining([
        [json.run_id, undefined, 1],
        [sub?.run_id, json.run_id, 0],
      ]),
    );
    expect(all.runs).toHaveLength(2);
    let text = '';
    await runCli(['runs', '--all', '--state-dir', stateDir], { stdout: (t) => (text += t), stderr: () => {}, env: {} });
    // The text listing nests the child under its parent.
    const lines = text.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^${json.run_id} .*1 child run$`));
    expect(lines[1]).toMatch(new RegExp(`^  └ ${sub?.run_id} `));
  });

  it('resumes a parent killed (SIGKILL) while its child runs: every completed node of both ran once', async () => {
    // Killed right after the child's c1 record is durable (crash.test.ts's exact kill points; the test above kills the real CLI mid-node).
    for (const crashAt of ['step:c1:1']) {
      const where = makeTempDir('nested-crash');
      const stateDir = join(where, 'state');
      const path = writeWorkflow(where, 'parent', parent(where, { workflow_ir: child(where) }));
      const runId = `nested_crash_${crashAt.replace(/:/g, '_')}`;
      const driver = await spawnCrashDriver({ stateDir, workflowPath: path, runId, crashAt }).done;
      expect(driver.signal, driver.stderr).toBe('SIGKILL');
      expect([count(where, 'p1'), count(where, 'c1'), count(where, 'c2'), count(where, 'p2')]).toEqual([1, 1, 0, 0]);

      const { code, json } = await cli(stateDir, ['resume', runId]);
      expect(code, JSON.stringify(json)).toBe(0);
      expect(json.result).toEqual({ said: 'got HELLO!' });
      expect([count(where, 'p1'), count(where, 'c1'), count(where, 'c2'), count(where, 'p2')]).toEqual([1, 1, 1, 1]);
      const sub = json.children?.[0];
      expect(sub?.steps.filter((s) => s.cached).map((s) => s.node_id)).toEqual(['c1']);
      expect(json.steps.filter((s) => s.cached).map((s) => s.node_id)).toEqual(['p1']);
    }
  });

  it('resumes a parent whose `flowmend run` process was SIGKILLed while a node of its child ran', async () => {
    const where = makeTempDir('nested-kill');
    const stateDir = join(where, 'state');
    const blocking = child(where);
    blocking.nodes[1] = { id: 'c2', type: 'shell', params: { command: blockingCommand(where, 'c2', { countFirst: false }) } };
    const path = writeWorkflow(where, 'parent', parent(where, { workflow_ir: blocking }));
    const running = spawnCli(['run', path, '--output-format', 'json'], { stateDir });
    await waitForFile(join(where, 'c2.started'), "the child's node c2 to start");
    running.child.kill('SIGKILL');
    expect((await running.done).signal).toBe('SIGKILL');
    killShellGroup(join(where, 'c2.pid'));
    expect([count(where, 'p1'), count(where, 'c1'), countLines(join(where, 'c2.count')), count(where, 'p2')]).toEqual([1, 1, 0, 0]);

    const runs = await cli(stateDir, ['runs']);
    const listed = (runs.json as unknown as { runs: { run_id: string; workflow: string; status: string }[] }).runs;
    const parentRun = listed.find((r) => r.workflow === 'parent');
    expect(parentRun?.status).toBe('running');
    writeFileSync(join(where, 'go'), '');
    const { code, json } = await cli(stateDir, ['resume', parentRun?.run_id ?? '']);
    expect(code, JSON.stringify(json)).toBe(0);
    expect(json.result).toEqual({ said: 'got c2-done' });
    expect([count(where, 'p1'), count(where, 'c1'), countLines(join(where, 'c2.count')), count(where, 'p2')]).toEqual([1, 1, 1, 1]);
    expect(json.children?.[0]?.steps.find((s) => s.node_id === 'c2')).toMatchObject({ status: 'completed', interrupted: true });
  });

  it('repairs a failing child by rules as a version of the child run, and the parent completes', async () => {
    const where = makeTempDir('nested-repair');
    const path = writeWorkflow(where, 'parent', parent(where, { workflow_ir: child(where, '${c1.stdot}') }));
    const { code, json } = await cli(join(where, 'state'), ['run', path]);
    expect(code, JSON.stringify(json)).toBe(0);
    expect(json.result).toEqual({ said: 'got HELLO!' });
    expect(json.repairs).toEqual([]);
    expect(json.children?.[0]?.repairs).toEqual([expect.objectContaining({ source: 'rules', nodes_changed: ['c2'] })]);
    expect([count(where, 'p1'), count(where, 'c1'), count(where, 'c2'), count(where, 'p2')]).toEqual([1, 1, 1, 1]);
  });
});

describe('workflow node: resume and limits', () => {
  it('resumes a failed child from its own failed node when the parent is resumed', async () => {
    const where = makeTempDir('nested-failed');
    const gate = join(where, 'gate');
    const failing = child(where);
    // c2 fails until the gate file exists: a fault outside the workflow that a person fixes before resuming.
    failing.nodes[1] = { id: 'c2', type: 'shell', params: { command: `echo ran >> ${join(where, 'c2.count')}; test -f ${gate} && echo "\${c1.stdout}!"` } };
    const path = writeWorkflow(where, 'parent', parent(where, { workflow_ir: failing }));
    const stateDir = join(where, 'state');
    const failed = await cli(stateDir, ['run', path, '--no-repair']);
    expect(failed.code).toBe(1);
    expect(failed.json.errors[0]).toMatchObject({ node_id: 'sub', code: 'ChildRunFailed', fixable: false });
    expect(failed.json.errors[0]?.message).toMatch(/child run .* failed at node 'c2'/);
    expect(failed.json.children?.[0]?.status).toBe('failed');

    const direct = await cli(stateDir, ['resume', String(failed.json.children?.[0]?.run_id)]);
    expect(direct.code).not.toBe(0);
    expect(JSON.stringify(direct.json)).toMatch(/is a child run of run .*resume the parent/);
    writeFileSync(gate, '');
    const resumed = await cli(stateDir, ['resume', failed.json.run_id]);
    expect(resumed.code, JSON.stringify(resumed.json)).toBe(0);
    expect(resumed.json.result).toEqual({ said: 'got HELLO!' });
    expect(resumed.json.children?.[0]?.run_id).toBe(failed.json.children?.[0]?.run_id);
    expect([count(where, 'p1'), count(where, 'c1'), count(where, 'c2'), count(where, 'p2')]).toEqual([1, 1, 2, 1]);
  });

  it('replays a completed child from its record when the parent resumes after a later node failed', async () => {
    const where = makeTempDir('nested-replay');
    const gate = join(where, 'gate');
    const wf = parent(where, { workflow_ir: child(where) });
    wf.nodes[2] = { id: 'p2', type: 'shell', params: { command: `echo ran >> ${join(where, 'p2.count')}; test -f ${gate} && echo "got \${sub.loud}"` } };
    const stateDir = join(where, 'state');
    const failed = await cli(stateDir, ['run', writeWorkflow(where, 'parent', wf), '--no-repair']);
    expect(failed.code).toBe(1);
    writeFileSync(gate, '');
    const { code, json } = await cli(stateDir, ['resume', failed.json.run_id]);
    expect(code, JSON.stringify(json)).toBe(0);
    expect(json.steps.filter((s) => s.cached).map((s) => s.node_id)).toEqual(['p1', 'sub']);
    expect(json.children?.[0]?.steps.map((s) => s.node_id)).toEqual(['c1', 'c2']);
    expect([count(where, 'p1'), count(where, 'c1'), count(where, 'c2'), count(where, 'p2')]).toEqual([1, 1, 1, 2]);
  });

  it("gives a failed child the parent's patched child IR as a new version of the child run", async () => {
    const where = makeTempDir('nested-patch');
    const stateDir = join(where, 'state');
    const broken = child(where);
    broken.nodes[1] = { id: 'c2', type: 'shell', params: { command: 'exit 5' } };
    const failed = await cli(stateDir, ['run', writeWorkflow(where, 'parent', parent(where, { workflow_ir: broken })), '--no-repair']);
    expect(failed.code).toBe(1);
    const patched = writeWorkflow(where, 'patched', parent(where, { workflow_ir: child(where) }));
    const { code, json } = await cli(stateDir, ['resume', failed.json.run_id, '--workflow', patched]);
    expect(code, JSON.stringify(json)).toBe(0);
    expect(json.result).toEqual({ said: 'got HELLO!' });
    expect(json.children?.[0]?.repairs).toEqual([expect.objectContaining({ source: 'manual', version: 1 })]);
    expect([count(where, 'p1'), count(where, 'c1'), count(where, 'c2'), count(where, 'p2')]).toEqual([1, 1, 1, 1]);
  });

  it('routes a failed child on error_action instead of failing the parent', async () => {
    const where = makeTempDir('nested-error-action');
    const broken = child(where);
    broken.nodes[1] = { id: 'c2', type: 'shell', params: { command: 'exit 3' } };
    const wf = parent(where, { workflow_ir: broken, error_action: 'fallback' });
    wf.nodes.push({ id: 'fallback', type: 'shell', params: { command: 'echo "fell back: ${sub.error}"' } });
    wf.edges.push({ from: 'sub', to: 'fallback', action: 'fallback' } as (typeof wf.edges)[number]);
    const path = writeWorkflow(where, 'parent', { ...wf, outputs: {} });
    const { code, json } = await cli(join(where, 'state'), ['run', path, '--no-repair']);
    expect(code, JSON.stringify(json)).toBe(0);
    expect(String(json.result.stdout)).toMatch(/fell back: child run .* failed at node 'c2'/);
  });

  it('keeps the chain of executions when a child run continues as a new execution', async () => {
    const where = makeTempDir('nested-continue');
    const host = new LocalHost({ store: new MemoryRunStore(), executionLimits: { maxAdvances: 3, maxMs: 60_000 } });
    const report = await host.start({
      workflow: WorkflowSchema.parse(parent(where, { workflow_ir: child(where) })),
      workflowName: 'continue',
      params: {},
      repairEnabled: false,
      maxRepairs: 0,
    });
    expect(report).toMatchObject({ status: 'succeeded', result: { said: 'got HELLO!' } });
    expect(host.stats.executions).toBeGreaterThan(1);
    expect([count(where, 'p1'), count(where, 'c1'), count(where, 'c2'), count(where, 'p2')]).toEqual([1, 1, 1, 1]);
  });

  it('stops a child run past max_depth at run time with a clear, non-repairable error', async () => {
    const leaf = { nodes: [{ id: 'leaf', type: 'transform', params: { expression: '1' } }] };
    const wrap = (inner: unknown, maxDepth?: number) => ({
      nodes: [{ id: 'nest', type: 'workflow', params: { workflow_ir: inner, ...(maxDepth ? { max_depth: maxDepth } : {}) } }],
    });
    // Validation refuses it too; a host that starts it anyway (repair on lets an invalid workflow start) stops at depth 2.
    const host = new LocalHost({ store: new MemoryRunStore() });
    const report = await host.start({
      workflow: WorkflowSchema.parse(wrap(wrap(wrap(leaf)), 1)),
      workflowName: 'deep',
      params: {},
      repairEnabled: false,
      maxRepairs: 0,
    });
    expect(report.status).toBe('failed');
    expect(report.errors[0]?.message).toMatch(/nesting depth 2, past the max_depth 1/);
  });
});

describe('validate: workflow nodes', () => {
  it('refuses a cycle of workflow files, naming it', async () => {
    const where = makeTempDir('nested-cycle');
    writeWorkflow(where, 'b', { nodes: [{ id: 'back', type: 'workflow', params: { workflow_ref: 'a.json' } }] });
    const a = writeWorkflow(where, 'a', { nodes: [{ id: 'call_b', type: 'workflow', params: { workflow_ref: './b.json' } }] });
    const { code, json } = await cli(join(where, 'state'), ['validate', a]);
    expect(code).toBe(2);
    const cycle = json.issues?.find((i) => i.code === 'WORKFLOW_CYCLE');
    expect(cycle?.message).toMatch(/a\.json -> .*b\.json -> .*a\.json/);
  });

  it('checks param_mapping against the child inputs and output_mapping against its outputs, naming the field', async () => {
    const where = makeTempDir('nested-mapping');
    const path = writeWorkflow(where, 'parent', {
      nodes: [{ id: 'sub', type: 'workflow', params: { workflow_ir: child(where), param_mapping: { greting: 'hi' }, output_mapping: { shoot: 'loud' } } }],
    });
    const { code, json } = await cli(join(where, 'state'), ['validate', path]);
    expect(code).toBe(2);
    const byCode = Object.fromEntries((json.issues ?? []).map((i) => [i.code, i]));
    expect(byCode.PARAM_MAPPING_UNKNOWN_INPUT).toMatchObject({
      path: 'nodes[0].params.param_mapping.greting',
      message: expect.stringMatching(/no input 'greting'/),
    });
    expect(byCode.PARAM_MAPPING_UNKNOWN_INPUT?.hint).toMatch(/Did you mean 'greeting'/);
    expect(byCode.PARAM_MAPPING_MISSING_INPUT?.message).toMatch(/requires input 'greeting'/);
    expect(byCode.OUTPUT_MAPPING_UNKNOWN_OUTPUT).toMatchObject({ path: 'nodes[0].params.output_mapping.shoot' });
    expect(byCode.OUTPUT_MAPPING_UNKNOWN_OUTPUT?.hint).toMatch(/Did you mean 'shout'/);
  });

  it('refuses a secret input mapped into a child other than as its own secret input of the same name', async () => {
    const where = makeTempDir('nested-secret');
    const leaf = {
      inputs: { key: { type: 'string' as const }, token: { type: 'string' as const, secret: true } },
      nodes: [{ id: 'use', type: 'shell', params: { command: 'echo ${key} ${token}' } }],
    };
    const path = writeWorkflow(where, 'parent', {
      inputs: { token: { type: 'string', secret: true } },
      nodes: [{ id: 'sub', type: 'workflow', params: { workflow_ir: leaf, param_mapping: { key: 'Bearer ${token}', token: '${token}' } } }],
    });
    const { code, json } = await cli(join(where, 'state'), ['validate', path]);
    expect(code).toBe(2);
    expect(json.issues?.filter((i) => i.code === 'PARAM_MAPPING_SECRET').map((i) => i.path)).toEqual(['nodes[0].params.param_mapping.key']);
  });

  it('bounds the nesting depth by max_depth with a clear error', async () => {
    const where = makeTempDir('nested-depth');
    const leaf = { nodes: [{ id: 'leaf', type: 'transform', params: { expression: '1' } }] };
    const wrap = (inner: unknown, maxDepth?: number) => ({
      nodes: [{ id: 'nest', type: 'workflow', params: { workflow_ir: inner, ...(maxDepth ? { max_depth: maxDepth } : {}) } }],
    });
    const path = writeWorkflow(where, 'deep', wrap(wrap(wrap(leaf)), 2));
    const { code, json } = await cli(join(where, 'state'), ['validate', path]);
    expect(code).toBe(2);
    expect(json.issues?.find((i) => i.code === 'NESTING_TOO_DEEP')?.message).toMatch(/past the max_depth 2/);
  });
});
