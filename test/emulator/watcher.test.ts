import { type ExecutionListItem, ListExecutionsCommand, StopExecutionCommand } from '@aws-sdk/client-sfn';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsNotAllowed, type DeployedStack, explain, useDeployedStack } from './support/stack.ts';

let stack: DeployedStack;
let mark = 0;

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

/** The running execution of a run whose name starts with `prefix`, once there is one. */
const runningExecution = async (machineArn: string, prefix: string): Promise<ExecutionListItem> => {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    const listed = await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: machineArn, statusFilter: 'RUNNING', maxResults: 1000 }));
    const found = (listed.executions ?? []).find((e) => e.name?.startsWith(prefix));
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`no running execution named ${prefix}... on ${machineArn}`);
};

const sleeper = (before: number) => ({
  ir_version: '0.1.0',
  nodes: [
    ...Array.from({ length: before }, (_, i) => ({ id: `n${i}`, type: 'transform', params: { expression: String(i) } })),
    { id: 'slow', type: 'shell', params: { command: 'sleep 6; echo woke' } },
  ],
  edges: Array.from({ length: before }, (_, i) => ({ from: `n${i}`, to: i + 1 < before ? `n${i + 1}` : 'slow' })),
  outputs: { said: { source: '${slow.stdout}' } },
});

describe('the watcher of the stack deployed to the AWS emulator marks a run whose execution died interrupted, and it resumes', () => {
  it('a Standard run whose first execution was stopped (EventBridge: Step Functions Execution Status Change)', async () => {
    const runId = await stack.start({ workflow: sleeper(0), mode: 'standard' });
    const execution = await runningExecution(stack.outputs.StandardStateMachineArn ?? '', `sfn-${runId}-`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await stack.sfn.send(new StopExecutionCommand({ executionArn: execution.executionArn, error: 'Emulated', cause: 'stopped by the test' }));
    const report = await stack.waitFor(runId, ['interrupted', 'succeeded', 'failed'], 60_000);
    expect(report.status, explain(report)).toBe('interrupted');
    await stack.api.call('POST', `/runs/${runId}/resume`, { body: {} });
    expect(await stack.waitFor(runId, ['succeeded', 'failed'], 120_000)).toMatchObject({ status: 'succeeded', result: { said: 'woke' } });
  });

  it('an Express run whose continued execution was stopped (its ERROR log record, through the log subscription)', async () => {
    // 12 engine steps an execution: the slow node runs in the run's second execution, c-<runId>-<rev>. moto lets a test
    // stop an Express execution; on AWS one dies by failing or timing out, which its log records the same way.
    const runId = await stack.start({ workflow: sleeper(14) });
    const execution = await runningExecution(stack.outputs.ExpressStateMachineArn ?? '', `c-${runId}-`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await stack.sfn.send(new StopExecutionCommand({ executionArn: execution.executionArn, error: 'Emulated', cause: 'stopped by the test' }));
    const report = await stack.waitFor(runId, ['interrupted', 'succeeded', 'failed'], 60_000);
    expect(report.status, explain(report)).toBe('interrupted');
    await stack.api.call('POST', `/runs/${runId}/resume`, { body: {} });
    expect(await stack.waitFor(runId, ['succeeded', 'failed'], 120_000)).toMatchObject({ status: 'succeeded', result: { said: 'woke' } });
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
