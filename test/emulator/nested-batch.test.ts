import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsNotAllowed, type DeployedStack, explain, scenarioDir, useDeployedStack } from './support/stack.ts';

let stack: DeployedStack;
let mark = 0;
const dir = scenarioDir('nested-batch');

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

/** How often each item's node ran: `{ a: 1, b: 2 }` from a log of item names the shell Lambda appends to. */
const ranPerItem = async (file: string): Promise<Record<string, number>> => {
  const counts: Record<string, number> = {};
  const lines = existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean) : [];
  for (const line of lines) counts[line] = (counts[line] ?? 0) + 1;
  return counts;
};

describe('a batch over a workflow node on the stack deployed to the AWS emulator', () => {
  it("runs a child run per item in item order; a resume runs only the failed item's child again, from its failed node", async () => {
    const c1 = join(dir, 'c1.log');
    const c2 = join(dir, 'c2.log');
    const gate = join(dir, 'gate');
    const child = {
      ir_version: '0.1.0',
      inputs: { name: { type: 'string', required: true } },
      nodes: [
        { id: 'c1', type: 'shell', params: { command: `echo "\${name}" >> ${c1}; echo "\${name}" | tr a-z A-Z` } },
        // Item b fails until the gate exists.
        { id: 'c2', type: 'shell', params: { command: `echo "\${name}" >> ${c2}; test "\${name}" != b -o -f ${gate} && echo "\${c1.stdout}!"` } },
      ],
      edges: [{ from: 'c1', to: 'c2' }],
      outputs: { shout: { source: '${c2.stdout}' } },
    };
    const workflow = {
      ir_version: '0.1.0',
      nodes: [
        {
          id: 'each',
          type: 'workflow',
          params: { workflow_ir: child, param_mapping: { name: '${item}' } },
          batch: { items: ['a', 'b', 'c'], parallel: true, max_concurrent: 3 },
        },
        { id: 'after', type: 'shell', params: { command: 'echo "${each.success_count}"' } },
      ],
      edges: [{ from: 'each', to: 'after' }],
      outputs: { shouts: { source: '${each.results}' }, done: { source: '${after.stdout}' } },
    };
    const runId = await stack.start({ workflow, repair: false });
    const first = await stack.waitFor(runId);
    // fail_fast (pflow's default): b's child failed, c never started.
    expect(first.status, explain(first)).toBe('failed');
    expect(JSON.stringify(first.errors)).toMatch(/item 2 of 3 failed: .*child run .* failed at node 'c2'/);
    expect([await ranPerItem(c1), await ranPerItem(c2)]).toEqual([
      { a: 1, b: 1 },
      { a: 1, b: 1 },
    ]);

    await writeFile(gate, '');
    await stack.api.call('POST', `/runs/${runId}/resume`, { body: {} });
    const resumed = await stack.waitFor(runId, ['succeeded', 'failed', 'cancelled', 'interrupted']);
    expect(resumed, explain(resumed)).toMatchObject({
      status: 'succeeded',
      result: { done: '3', shouts: [{ shout: 'A!' }, { shout: 'B!' }, { shout: 'C!' }] },
    });
    // a replayed from its item record; b the same child, only its failed node again; c a new child.
    expect([await ranPerItem(c1), await ranPerItem(c2)]).toEqual([
      { a: 1, b: 1, c: 1 },
      { a: 1, b: 2, c: 1 },
    ]);
  });

  it('cancels the child run of the item in flight with its parent; later items never start', async () => {
    const log = join(dir, 'cancel-c1.log');
    const started = join(dir, 'b.started');
    const go = join(dir, 'go');
    const child = {
      ir_version: '0.1.0',
      inputs: { name: { type: 'string', required: true } },
      nodes: [
        { id: 'c1', type: 'shell', params: { command: `echo "\${name}" >> ${log}` } },
        // Item b waits (at most 20 s) until the test has cancelled the parent.
        {
          id: 'c2',
          type: 'shell',
          params: { command: `if [ "\${name}" = b ]; then touch ${started}; for i in $(seq 200); do [ -f ${go} ] && break; sleep 0.1; done; fi; echo ok` },
        },
      ],
      edges: [{ from: 'c1', to: 'c2' }],
    };
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'each', type: 'workflow', params: { workflow_ir: child, param_mapping: { name: '${item}' } }, batch: { items: ['a', 'b', 'c'] } }],
    };
    const runId = await stack.start({ workflow, repair: false });
    const deadline = Date.now() + 60_000;
    while (!existsSync(started) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(started)).toBe(true);
    const cancelled = await stack.api.call<{ status: string }>('POST', `/runs/${runId}/cancel`, { body: {} });
    expect(cancelled.status).toBe('cancelled');
    await writeFile(go, '');
    const report = (await stack.waitFor(runId)) as Awaited<ReturnType<DeployedStack['waitFor']>> & { children?: { index?: number; run_id: string }[] };
    expect(report.status).toBe('cancelled');
    const b = report.children?.find((c) => c.index === 1);
    expect(b, JSON.stringify(report.children)).toBeDefined();
    expect((await stack.waitFor(b?.run_id ?? '')).status).toBe('cancelled');
    // The execution ends at b's child: c's child never starts.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    expect(await ranPerItem(log)).toEqual({ a: 1, b: 1 });
  });

  it("makes only AWS calls its Lambdas' roles allow", async () => {
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  });
});
