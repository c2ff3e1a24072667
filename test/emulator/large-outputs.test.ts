import { InvokeCommand } from '@aws-sdk/client-lambda';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsNotAllowed, type DeployedStack, explain, type RunReport, useDeployedStack } from './support/stack.ts';

let stack: DeployedStack;
let mark = 0;

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

/** A node whose stdout is `bytes` bytes (over the 256 KiB a state payload holds), and one that reads its length. */
const bigThenCount = (bytes: number) => ({
  ir_version: '0.1.0',
  nodes: [
    { id: 'fill', type: 'shell', params: { command: `head -c ${bytes} /dev/zero | tr '\\0' a` } },
    { id: 'count', type: 'shell', params: { stdin: '${fill.stdout}', command: 'wc -c' } },
  ],
  edges: [{ from: 'fill', to: 'count' }],
  outputs: { length: { source: '${count.stdout}' } },
});

const blobKeys = async (runId: string): Promise<string[]> => {
  const listed = await stack.s3.send(new ListObjectsV2Command({ Bucket: stack.outputs.BucketName, Prefix: `runs/${runId}/` }));
  return (listed.Contents ?? []).map((o) => o.Key ?? '');
};

describe('outputs over the state payload limit on the stack deployed to the AWS emulator', () => {
  it.each(['express', 'standard'])('go through S3 by presigned URL on the %s machine, and the next node reads them whole', async (mode) => {
    const runId = await stack.start({ workflow: bigThenCount(300 * 1024), mode });
    const report = await stack.waitFor(runId);
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { length: String(300 * 1024) } });
    expect(await blobKeys(runId)).toContain(`runs/${runId}/steps/1.json`);
  });

  it('a run whose result is over what a Lambda may answer is reported without it, not as a bare 502', async () => {
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'fill', type: 'shell', params: { command: "head -c 6500000 /dev/zero | tr '\\0' a" } }],
      outputs: {},
    };
    const runId = await stack.start({ workflow: { ...workflow, outputs: { text: { source: '${fill.stdout}' } } } });
    await stack.waitFor(runId);
    const report = await stack.api.call<RunReport & { result_omitted?: { bytes: number } }>('GET', `/runs/${runId}`);
    expect(report.status, explain(report)).toBe('succeeded');
    expect(report.result_omitted?.bytes).toBeGreaterThan(6_500_000);
  });

  it('a retried StartRun of a run whose result is a blob finds the run (its role may read the blob)', async () => {
    const runId = `retried-${Date.now().toString(36)}`;
    const request = { workflow: bigThenCount(300 * 1024), runId, workflowName: 'retried' };
    const invoke = async () => {
      const answer = await stack.lambda.send(new InvokeCommand({ FunctionName: stack.outputs.StartRunFunctionName, Payload: JSON.stringify(request) }));
      return { error: answer.FunctionError, body: JSON.parse(new TextDecoder().decode(answer.Payload)) as Record<string, unknown> };
    };
    expect((await invoke()).error).toBeUndefined();
    await stack.waitFor(runId);
    const again = await invoke();
    expect(again.error).toBeUndefined();
    expect(again.body).toMatchObject({ runId });
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
