import { ListExecutionsCommand } from '@aws-sdk/client-sfn';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsNotAllowed, type DeployedStack, explain, useDeployedStack } from './support/stack.ts';

let stack: DeployedStack;
let mark = 0;

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

interface RunWorkflow {
  version: number;
  source: string;
  workflow: { nodes: { id: string; params: Record<string, unknown> }[] };
}

describe("a run's current workflow through the REST API of the stack on the AWS emulator", () => {
  it('GET /runs/{id}/workflow answers the version the rules repaired; a patch made from the original is carried onto it', async () => {
    const workflow = (report: string) => ({
      ir_version: '0.1.0',
      nodes: [
        { id: 'fetch', type: 'shell', params: { command: `echo '{"user": {"login": "ada"}}'` } },
        { id: 'shout', type: 'shell', params: { stdin: '${fetch.stdout.user.logn}', command: 'tr a-z A-Z' } },
        { id: 'report', type: 'shell', params: { command: report } },
      ],
      edges: [
        { from: 'fetch', to: 'shout' },
        { from: 'shout', to: 'report' },
      ],
      outputs: { out: { source: '${report.stdout}' } },
    });
    const runId = await stack.start({ workflow: workflow('echo ${shout.stdout}; exit 3'), max_repairs: 1 });
    const failed = await stack.waitFor(runId);
    expect(failed.status, explain(failed)).toBe('failed');

    const current = await stack.api.call<RunWorkflow>('GET', `/runs/${runId}/workflow`);
    expect(current).toMatchObject({ version: 1, source: 'rules' });
    expect(current.workflow.nodes[1]?.params.stdin).toBe('${fetch.stdout.user.login}');

    // The run is written failed a moment before its execution's Fail state ends it. A resume in between races
    // the watcher, which can take that end for the resumed run's (it compares times, not owners): not this scenario's subject.
    const running = async () =>
      ((await stack.sfn.send(new ListExecutionsCommand({ stateMachineArn: stack.outputs.ExpressStateMachineArn, maxResults: 1000 }))).executions ?? []).some(
        (e) => e.name?.includes(runId) && e.status === 'RUNNING',
      );
    for (let tries = 0; tries < 50 && (await running()); tries += 1) await new Promise((resolve) => setTimeout(resolve, 200));

    // The person fixes `report` in the workflow they started (the typo still in it).
    await stack.api.call('POST', `/runs/${runId}/resume`, { body: { workflow: workflow('echo ${shout.stdout}') } });
    const report = await stack.waitFor(runId, ['succeeded', 'failed', 'cancelled', 'interrupted']);
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { out: 'ADA' } });
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
