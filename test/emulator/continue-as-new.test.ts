import { ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { beforeAll, describe, expect, it } from 'vitest';
import { EMULATOR_STACK_PROPS } from '../../infra/emulator-stack.ts';
import { callsNotAllowed, type DeployedStack, useDeployedStack } from './support/stack.ts';

let stack: DeployedStack;
let mark = 0;

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

describe('continue-as-new on the stack deployed to the AWS emulator (limits shrunk by the maxAdvancesPerExecution prop)', () => {
  it('runs a chain longer than one execution may hold as several executions named after the run, to the same result', async () => {
    const length = 16;
    const workflow = {
      ir_version: '0.1.0',
      nodes: Array.from({ length }, (_, i) => ({
        id: `n${i}`,
        type: 'transform',
        params: i === 0 ? { expression: '1' } : { expression: '$ + 1', input: `\${n${i - 1}.result}` },
      })),
      edges: Array.from({ length: length - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` })),
      outputs: { last: { source: `\${n${length - 1}.result}` } },
    };
    const runId = await stack.start({ workflow });
    expect(await stack.waitFor(runId)).toMatchObject({ status: 'succeeded', result: { last: length } });
    // The run is written succeeded by its last Advance, a moment before that execution's Done state ends it.
    const ofRunNow = async () =>
      ((await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.outputs.ExpressStateMachineArn, maxResults: 1000 }))).executions ?? []).filter(
        (e) => e.name?.includes(runId),
      );
    let ofRun = await ofRunNow();
    for (let tries = 0; tries < 50 && ofRun.some((e) => e.status === 'RUNNING'); tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      ofRun = await ofRunNow();
    }
    // An Advance for the start and one for each node's result: 17 Advances, over the 12 an execution may have here.
    expect(ofRun.length).toBeGreaterThanOrEqual(2);
    expect(ofRun.every((e) => e.status === 'SUCCEEDED')).toBe(true);
    expect(ofRun.map((e) => e.name)).toContain(ofRun.map((e) => e.name).find((name) => name?.startsWith(`sfn-${runId}-`)));
    expect(ofRun.filter((e) => e.name?.startsWith(`c-${runId}-`)).length).toBe(ofRun.length - 1);
    expect(EMULATOR_STACK_PROPS.maxAdvancesPerExecution).toBe(12);
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
