import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsNotAllowed, type DeployedStack, explain, scenarioDir, useDeployedStack } from './support/stack.ts';

let stack: DeployedStack;
let mark = 0;
const dir = scenarioDir('resume');

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

/** A node whose side effect (a line in a file the Lambda shares with the test) counts how often it ran. */
const counted = (id: string, file: string) => ({ id, type: 'shell', params: { command: `echo ran >> ${file}; echo done` } });
const lines = async (file: string) => (existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean).length : 0);

describe('resume and cancel through the REST API of the stack on the AWS emulator', () => {
  it('resumes a failed run: the node that failed runs again, the one before it is replayed, not run twice', async () => {
    const once = join(dir, 'first.count');
    const flag = join(dir, 'ready');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [counted('first', once), { id: 'second', type: 'shell', params: { command: `test -f ${flag} && echo fixed` } }],
      edges: [{ from: 'first', to: 'second' }],
      outputs: { said: { source: '${second.stdout}' } },
    };
    const runId = await stack.start({ workflow, repair: false });
    expect((await stack.waitFor(runId)).status).toBe('failed');
    await writeFile(flag, '');
    await stack.api.call('POST', `/runs/${runId}/resume`, { body: {} });
    const report = await stack.waitFor(runId, ['succeeded', 'failed', 'cancelled', 'interrupted']);
    expect(report, explain(report)).toMatchObject({ status: 'succeeded', result: { said: 'fixed' } });
    expect(await lines(once)).toBe(1);
  });

  it('resumes a failed run with a patched workflow', async () => {
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'echo 20' } },
        { id: 'b', type: 'shell', params: { command: 'exit 3' } },
      ],
      edges: [{ from: 'a', to: 'b' }],
      outputs: { out: { source: '${b.stdout}' } },
    };
    const runId = await stack.start({ workflow, repair: false });
    expect((await stack.waitFor(runId)).status).toBe('failed');
    const patched = { ...workflow, nodes: [workflow.nodes[0], { id: 'b', type: 'shell', params: { command: 'expr ${a.stdout} + 1' } }] };
    await stack.api.call('POST', `/runs/${runId}/resume`, { body: { workflow: patched } });
    expect(await stack.waitFor(runId, ['succeeded', 'failed'])).toMatchObject({ status: 'succeeded', result: { out: '21' } });
  });

  it('cancels a live run: its status is cancelled and the node after the one in flight never runs', async () => {
    const after = join(dir, 'after.count');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'slow', type: 'shell', params: { command: 'sleep 4; echo slept' } }, counted('after', after)],
      edges: [{ from: 'slow', to: 'after' }],
    };
    const runId = await stack.start({ workflow });
    await stack.waitFor(runId, ['running']);
    // Until the slow node is in flight.
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      const events = await stack.api.call<{ events: { type: string }[] }>('GET', `/runs/${runId}/events`);
      if (events.events.some((e) => e.type === 'run_started')) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const cancelled = await stack.api.call<{ status: string }>('POST', `/runs/${runId}/cancel`, { body: {} });
    expect(cancelled.status).toBe('cancelled');
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    expect((await stack.waitFor(runId)).status).toBe('cancelled');
    expect(await lines(after)).toBe(0);
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
