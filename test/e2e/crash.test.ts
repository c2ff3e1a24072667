import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { groupAlive } from '../../functions/nodes/process-groups.ts';
import {
  blockingCommand,
  type CliResult,
  countLines,
  killShellGroup,
  killStrayChildren,
  makeTempDir,
  parseJsonOutput,
  runCli,
  spawnCli,
  spawnCrashDriver,
  waitForFile,
  writeWorkflow,
} from '../support/cli-process.ts';

const root = makeTempDir('crash');
const stateDir = join(root, 'state');
let local: { store: SqliteRunStore };

beforeAll(async () => {
  local = { store: SqliteRunStore.open(stateDir) };
});
const caseDirs: string[] = [];
afterAll(async () => {
  killStrayChildren();
  // A blocking node of a test that failed half-way is waiting for its go file.
  for (const dir of caseDirs) writeFileSync(join(dir, 'go'), '');
  local?.store.close();
});

const caseDir = (name: string): string => {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  caseDirs.push(dir);
  return dir;
};

/** a -> b -> c, each appending to its own counter file; b blocks until the test writes `go` when asked to. */
const chain = (dir: string, b: string): WorkflowInput => ({
  nodes: [
    { id: 'a', type: 'shell', params: { command: `echo x >> ${dir}/a.count; echo A` } },
    { id: 'b', type: 'shell', params: { command: b } },
    { id: 'c', type: 'shell', params: { command: `echo x >> ${dir}/c.count; echo \${a.stdout}-\${b.stdout}` } },
  ],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
  ],
  outputs: { final: { source: '${c.stdout}' } },
});

const counts = (dir: string, ...names: string[]) => Object.fromEntries(names.map((n) => [n, countLines(join(dir, `${n}.count`))]));

/** The id of the one running run of a workflow (the CLI names a run after its workflow file). */
const runningRunId = async (workflowName: string): Promise<string> => {
  const runs = await local.store.listRuns({ limit: 50, workflowName });
  const running = runs.filter((r) => r.status === 'running');
  expect(running).toHaveLength(1);
  return running[0]?.runId as string;
};

const stepsOf = (report: RunReport) => report.steps.map((s) => `${s.node_id}:${s.cached ? 'cached' : s.status}${s.interrupted ? ':interrupted' : ''}`);

const expectKilled = (result: CliResult) => expect(result.signal, `stdout: ${result.stdout}\nstderr: ${result.stderr}`).toBe('SIGKILL');

describe('flowmend resume after the CLI was killed with SIGKILL', () => {
  it('in the middle of a node: refuses while the process lives; after the kill, of two resumers one wins and the interrupted node runs again', async () => {
    const dir = caseDir('mid-node');
    const wf = writeWorkflow(dir, 'mid-node', chain(dir, blockingCommand(dir, 'b', { countFirst: true })));
    const first = spawnCli(['run', wf, '--output-format', 'json'], { stateDir });
    await waitForFile(join(dir, 'b.started'), 'node b to start');
    const runId = await runningRunId('mid-node');

    const refused = await runCli(['resume', runId], { stateDir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`run ${runId} is still being run by`);
    expect(refused.stderr).toContain(`pid ${first.pid}`);

    first.child.kill('SIGKILL');
    expectKilled(await first.done);
    killShellGroup(join(dir, 'b.pid'));
    rmSync(join(dir, 'b.started'));
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 1, c: 0 });

    const resumers = [0, 1].map(() => spawnCli(['resume', runId, '--output-format', 'json'], { stateDir }));
    const loser = await Promise.race(resumers.map((r, i) => r.done.then((result) => ({ i, result }))));
    expect(loser.result.code, loser.result.stdout + loser.result.stderr).toBe(1);
    expect(parseJsonOutput(loser.result)).toMatchObject({ success: false, error: expect.stringContaining(runId) });
    await waitForFile(join(dir, 'b.started'), 'node b to run again');
    writeFileSync(join(dir, 'go'), '');
    const winner = await (resumers[1 - loser.i] as (typeof resumers)[number]).done;
    expect(winner.code, winner.stderr).toBe(0);
    const report = parseJsonOutput<RunReport>(winner);
    expect(report).toMatchObject({ success: true, status: 'succeeded', run_id: runId, result: { final: 'A-b-done' } });
    expect(stepsOf(report)).toEqual(['a:completed', 'a:cached', 'b:completed:interrupted', 'c:completed']);
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 2, c: 1 });
  });

  it('between nodes: the next node had not begun its work, resume runs it once and the rest once', async () => {
    const dir = caseDir('between');
    const wf = writeWorkflow(dir, 'between', chain(dir, blockingCommand(dir, 'b', { countFirst: false })));
    const first = spawnCli(['run', wf], { stateDir });
    await waitForFile(join(dir, 'b.started'), 'node b to start');
    const runId = await runningRunId('between');
    first.child.kill('SIGKILL');
    expectKilled(await first.done);
    killShellGroup(join(dir, 'b.pid'));
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 0, c: 0 });

    writeFileSync(join(dir, 'go'), '');
    const resumed = await runCli(['resume', runId], { stateDir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`Resuming run ${runId} (resumed from running)`);
    expect(resumed.stdout).toContain('  a... ↻ cached');
    expect(resumed.stdout).toContain('  b... was interrupted; running it again');
    expect(resumed.stdout).toMatch(/ {2}b\.\.\. ✓ \d+\.\ds \[ran again after interruption\]/);
    const report = (await new LocalHost({ store: local.store }).report(runId)) as RunReport;
    expect(report).toMatchObject({ success: true, result: { final: 'A-b-done' } });
    expect(stepsOf(report)).toEqual(['a:completed', 'a:cached', 'b:completed:interrupted', 'c:completed']);
    expect(report.metrics).toMatchObject({ nodes_executed: 3, nodes_cached: 1 });
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 1, c: 1 });
  });
});

describe('a shell command that outlived its killed host', () => {
  it('is ended (its whole process group) before resume runs the node again, so its side effect happens once', async () => {
    const dir = caseDir('orphan');
    // b records its pid, then waits for go, and only then counts: a surviving copy would count a second time.
    const wf = writeWorkflow(dir, 'orphan', chain(dir, blockingCommand(dir, 'b', { countFirst: false })));
    const first = spawnCli(['run', wf], { stateDir });
    await waitForFile(join(dir, 'b.started'), 'node b to start');
    const runId = await runningRunId('orphan');
    const orphan = Number(readFileSync(join(dir, 'b.pid'), 'utf8'));
    first.child.kill('SIGKILL');
    expectKilled(await first.done);
    // The host is gone; its command's group (the sh and its sleep) lives on.
    expect(await groupAlive(orphan)).toBe(true);
    rmSync(join(dir, 'b.started'));

    const resumed = spawnCli(['resume', runId, '--output-format', 'json'], { stateDir });
    await waitForFile(join(dir, 'b.started'), 'node b to run again');
    expect(Number(readFileSync(join(dir, 'b.pid'), 'utf8'))).not.toBe(orphan);
    expect(await groupAlive(orphan)).toBe(false);
    writeFileSync(join(dir, 'go'), '');
    const result = await resumed.done;
    expect(result.code, result.stderr).toBe(0);
    expect(parseJsonOutput<RunReport>(result)).toMatchObject({ success: true, result: { final: 'A-b-done' } });
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 1, c: 1 });
  });
});

describe('resume after SIGKILL at an exact store write', () => {
  const quickChain = (dir: string) => chain(dir, `echo x >> ${dir}/b.count; echo B`);
  let sequence = 0;

  const crashThenResume = async (name: string, workflow: (dir: string) => WorkflowInput, crashAt: string) => {
    const dir = caseDir(name);
    const runId = `crash-${++sequence}-${name}`;
    const driver = spawnCrashDriver({ stateDir, workflowPath: writeWorkflow(dir, 'wf', workflow(dir)), runId, crashAt });
    expectKilled(await driver.done);
    const host = new LocalHost({ store: local.store });
    return { dir, runId, host, resume: () => host.resume(runId) };
  };

  // Where a write of the run item and of a step record may land together, the crash can leave either one: the checks
  // hold for both (each node executed once, the same result); `interrupted` is checked where only one outcome exists.
  it.each([
    ['run:created', 'after the run is created, before its first step', []],
    ['step:a:1', 'after a node’s record is written', undefined],
    ['run:b:1', 'after the next node is marked in flight, before it starts', ['b']],
    ['step:c:1', 'after the last node’s record is written', undefined],
  ])('%s (%s): same result, every node ran once', async (crashAt, _when, interrupted) => {
    const { dir, runId, host, resume } = await crashThenResume(crashAt.replace(/:/g, '-'), quickChain, crashAt);
    const stored = await host.report(runId);
    const report = stored?.status === 'succeeded' ? stored : await resume();
    expect(report).toMatchObject({ success: true, result: { final: 'A-B' } });
    expect(report.steps.filter((s) => !s.cached).map((s) => `${s.node_id}:${s.status}`)).toEqual(['a:completed', 'b:completed', 'c:completed']);
    if (interrupted) expect(report.steps.filter((s) => s.interrupted).map((s) => s.node_id)).toEqual(interrupted);
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 1, c: 1 });
  });

  it('two resumes racing on one store: exactly one claims the run, the other is refused, nothing runs twice', async () => {
    const { dir, runId, host } = await crashThenResume('race', quickChain, 'run:b:1');
    const other = new LocalHost({ store: local.store });
    const outcomes = await Promise.allSettled([host.resume(runId), other.resume(runId)]);
    const won = outcomes.filter((o) => o.status === 'fulfilled');
    const refused = outcomes.filter((o) => o.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(won[0]?.value).toMatchObject({ success: true, result: { final: 'A-B' } });
    expect(refused).toHaveLength(1);
    expect(refused[0]?.reason).toMatchObject({ name: 'RunBusyError', message: expect.stringContaining(`run ${runId}`) });
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 1, c: 1 });
  });

  it('after the run was marked succeeded: resume refuses and the stored result stands', async () => {
    const { dir, runId, host, resume } = await crashThenResume('succeeded', quickChain, 'run:succeeded');
    await expect(resume()).rejects.toThrow(`run ${runId} already succeeded`);
    expect((await host.report(runId))?.result).toEqual({ final: 'A-B' });
    expect(counts(dir, 'a', 'b', 'c')).toEqual({ a: 1, b: 1, c: 1 });
  });

  it('in a loop routed by error edges: recorded visits replay, including the failed checks that chose the way', async () => {
    const loop = (dir: string): WorkflowInput => ({
      nodes: [
        { id: 'inc', type: 'shell', params: { command: `echo x >> ${dir}/inc.count; printf '%s' $(wc -l < ${dir}/inc.count)` } },
        { id: 'enough', type: 'shell', params: { command: `echo x >> ${dir}/enough.count; test \${inc.stdout} -ge 3` } },
        { id: 'done', type: 'transform', params: { expression: '$number($)', input: '${inc.stdout}' } },
      ],
      edges: [
        { from: 'inc', to: 'enough' },
        { from: 'enough', to: 'inc', action: 'error' },
        { from: 'enough', to: 'done' },
      ],
      outputs: { rounds: { source: '${done.result}' } },
    });
    const { dir, resume } = await crashThenResume('loop', loop, 'run:inc:3');
    expect(counts(dir, 'inc', 'enough')).toEqual({ inc: 2, enough: 2 });
    const report = await resume();
    expect(report).toMatchObject({ success: true, result: { rounds: 3 } });
    expect(counts(dir, 'inc', 'enough')).toEqual({ inc: 3, enough: 3 });
    expect(report.steps.filter((s) => s.cached).map((s) => s.node_id)).toEqual(['inc', 'enough', 'inc', 'enough']);
  });
});
