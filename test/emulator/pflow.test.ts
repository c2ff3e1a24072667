import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type ExecutionListItem, GetExecutionHistoryCommand, ListExecutionsCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsNotAllowed, type DeployedStack, explain, type RunReport, scenarioDir, useDeployedStack } from './support/stack.ts';

// pflow's 2026 features on the stack deployed to the AWS emulator (issue 29): the code node on its Python
// Lambda, a loop interrupted mid-way and resumed, a retry through the RetryWait state, the memo cache in
// the runs' table (DynamoMemoStore), each AWS call checked against the template's roles.
let stack: DeployedStack;
let mark = 0;
const dir = scenarioDir('pflow');

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

const lines = async (file: string): Promise<string[]> => (existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean) : []);

/** The executions of a run on the Standard machine (first `sfn-<runId>-...`, continued `c-<runId>-...`), oldest first. */
const executionsOf = async (runId: string): Promise<ExecutionListItem[]> => {
  const listed = await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.outputs.StandardStateMachineArn, maxResults: 1000 }));
  return (listed.executions ?? []).filter((e) => e.name?.includes(runId)).sort((a, b) => Number(a.startDate) - Number(b.startDate));
};

/** Names of the states the run's executions entered, in order. */
const statesEntered = async (runId: string): Promise<string[]> => {
  const names: string[] = [];
  for (const execution of await executionsOf(runId)) {
    const history = await stack.sfn.send(new GetExecutionHistoryCommand({ executionArn: execution.executionArn, maxResults: 1000 }));
    for (const event of history.events ?? []) if (event.stateEnteredEventDetails?.name) names.push(event.stateEnteredEventDetails.name);
  }
  return names;
};

describe("pflow's 2026 features on the stack deployed to the AWS emulator", () => {
  it('runs a code node on the Python runner Lambda: inputs bound, result out, next routes, no Lambda variable in reach', async () => {
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        {
          id: 'judge',
          type: 'code',
          params: {
            code: 'import os, sys\nn: int\nresult = {"double": n * 2, "python": sys.version_info[:2], "aws": sorted(k for k in os.environ if k.startswith("AWS_"))}\nnext = "big" if n > 10 else "small"',
            inputs: { n: '${n}' },
          },
        },
        { id: 'big', type: 'shell', params: { command: 'echo big' } },
        { id: 'small', type: 'shell', params: { command: 'echo small' } },
      ],
      edges: [
        { from: 'judge', to: 'big', action: 'big' },
        { from: 'judge', to: 'small', action: 'small' },
      ],
      inputs: { n: { type: 'integer' } },
      outputs: { judged: { source: '${judge.result}' }, said: { source: '${big.stdout ?? small.stdout}' } },
    };
    const report = await stack.waitFor(await stack.start({ workflow, params: { n: 21 } }));
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { judged: { double: 42, aws: [] }, said: 'big' } });
    // The code ran in the machine's python3 (the emulator's runtime for python3.12 functions).
    expect(report.result?.judged).toMatchObject({ python: [3, expect.any(Number)] });
  });

  it("uploads a code node's result too large for a state payload to S3, and reads it back", async () => {
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'big', type: 'code', params: { code: 'result = "y" * 300000' } }],
      outputs: { size: { source: '${big.result}' } },
    };
    const report = await stack.waitFor(await stack.start({ workflow }));
    expect(report.status, explain(report)).toBe('succeeded');
    expect(report.result?.size).toBe('y'.repeat(300_000));
  });

  it('resumes a loop interrupted in its second iteration at that iteration: the first is replayed, not run again', async () => {
    const log = join(dir, 'loop.log');
    const resumed = join(dir, 'resumed');
    // Iteration 2 waits (until the test stops its execution); once resumed it goes on; iteration 3 ends the loop.
    const command = [
      `echo "iteration \${__iteration__}" >> ${log}`,
      `if [ \${__iteration__} -eq 2 ] && [ ! -f ${resumed} ]; then sleep 10; fi`,
      `if [ \${__iteration__} -ge 3 ]; then echo true; else echo false; fi`,
    ].join('\n');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'rounds', type: 'shell', params: { command }, loop: { until: '${rounds.stdout}', max_iterations: 5 } }],
      outputs: { last: { source: '${rounds.stdout}' }, stopped: { source: '${rounds.loop_stopped}' } },
    };
    const runId = await stack.start({ workflow, mode: 'standard' });
    const deadline = Date.now() + 60_000;
    while (!(await lines(log)).includes('iteration 2')) {
      if (Date.now() > deadline) throw new Error(`iteration 2 never started: ${(await lines(log)).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    const [running] = (await executionsOf(runId)).filter((e) => e.status === 'RUNNING');
    await stack.sfn.send(new StopExecutionCommand({ executionArn: running?.executionArn, error: 'Emulated', cause: 'stopped by the test mid-loop' }));
    const interrupted = await stack.waitFor(runId, ['interrupted', 'succeeded', 'failed'], 60_000);
    expect(interrupted.status, explain(interrupted)).toBe('interrupted');
    await writeFile(resumed, '');
    await stack.api.call('POST', `/runs/${runId}/resume`, { body: {} });
    const report = await stack.waitFor(runId, ['succeeded', 'failed'], 120_000);
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { last: 'true', stopped: 'condition' } });
    // Iteration 2 ran again (its execution died in it); iteration 1 did not.
    expect(await lines(log)).toEqual(['iteration 1', 'iteration 2', 'iteration 2', 'iteration 3']);
  });

  it('retries a failing node through the RetryWait state (no Lambda waits), and the try that passes is a clean success', async () => {
    const tries = join(dir, 'tries');
    const command = `echo try >> ${tries}; test "$(wc -l < ${tries})" -ge 3 && echo third`;
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'flaky', type: 'shell', params: { command }, retry: { max: 3, wait: 1, backoff: 'exponential' } }],
      outputs: { said: { source: '${flaky.stdout}' } },
    };
    const runId = await stack.start({ workflow, mode: 'standard', repair: false });
    const report: RunReport = await stack.waitFor(runId, ['succeeded', 'failed'], 120_000);
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { said: 'third' } });
    expect(await lines(tries)).toHaveLength(3);
    const states = await statesEntered(runId);
    // Two waits, each followed by the runner again: Route -> RetryWait -> CheckRun -> RouteRetry -> RunShell.
    expect(states.filter((s) => s === 'RetryWait')).toHaveLength(2);
    expect(states.filter((s) => s === 'CheckRun')).toHaveLength(2);
    expect(states.filter((s) => s === 'RunShell')).toHaveLength(3);
  });

  it('reuses a cached result from the runs table in a later run (DynamoMemoStore), and not with no_cache', async () => {
    const workflow = {
      ir_version: '0.1.0',
      inputs: { topic: { type: 'string' } },
      nodes: [{ id: 'stamp', type: 'shell', params: { command: 'echo "${topic} $(date +%s%N)"' }, cache: true }],
      outputs: { stamp: { source: '${stamp.stdout}' } },
    };
    const run = async (extra: Record<string, unknown> = {}) => stack.waitFor(await stack.start({ workflow, params: { topic: 'otters' }, ...extra }));
    const first = await run();
    expect(first.status, explain(first)).toBe('succeeded');
    const second = await run();
    expect(second).toMatchObject({ status: 'succeeded', result: first.result, metrics: { nodes_cached: 1, nodes_executed: 0 } });
    // Other params, another key: never another input's result.
    const other = await stack.waitFor(await stack.start({ workflow, params: { topic: 'badgers' } }));
    expect(other.result?.stamp).toMatch(/^badgers /);
    const bypassed = await run({ no_cache: true });
    expect(bypassed).toMatchObject({ status: 'succeeded', metrics: { nodes_cached: 0, nodes_executed: 1 } });
    expect(bypassed.result?.stamp).not.toBe(first.result?.stamp);
  });

  it("makes only AWS calls its Lambdas' roles allow (the memo's reads and writes, the code runner's none)", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
