import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { callsNotAllowed, type DeployedStack, explain, scenarioDir, useDeployedStack } from './support/stack.ts';

// A cancel during a retry's wait on the deployed stack: an Express execution cannot be stopped from outside,
// so the CheckRun state after the RetryWait is what keeps the next try (and its side effect) from running.

let stack: DeployedStack;
let mark = 0;
const dir = scenarioDir('cancel-retry');

beforeAll(async () => {
  stack = await useDeployedStack();
  mark = stack.mark();
});

const lines = async (file: string) => (existsSync(file) ? (await readFile(file, 'utf8')).split('\n').filter(Boolean).length : 0);

describe('a cancel during a retry wait on the stack on the AWS emulator', () => {
  it('the next try never runs, the answer says it had not started, and the run ends cancelled', async () => {
    const tries = join(dir, 'tries');
    const workflow = {
      ir_version: '0.1.0',
      nodes: [{ id: 'flaky', type: 'shell', params: { command: `echo try >> ${tries}; exit 3` }, retry: { max: 3, wait: 6 } }],
    };
    const runId = await stack.start({ workflow, repair: false });
    const deadline = Date.now() + 60_000;
    for (;;) {
      const events = await stack.api.call<{ events: { type: string }[] }>('GET', `/runs/${runId}/events`);
      if (events.events.some((e) => e.type === 'node_retrying')) break;
      if (Date.now() > deadline) throw new Error('the first try never failed');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const cancelled = await stack.api.call<Record<string, unknown>>('POST', `/runs/${runId}/cancel`, { body: {} });
    expect(cancelled).toMatchObject({ status: 'cancelled', interrupted_node: 'flaky', node_outcome: 'not_started' });
    // Past the end of the wait (6 s) and a try's run on a warm Lambda.
    await new Promise((resolve) => setTimeout(resolve, 12_000));
    expect(await lines(tries)).toBe(1);
    const report = await stack.waitFor(runId, ['cancelled', 'succeeded', 'failed']);
    expect(report.status, explain(report)).toBe('cancelled');
    expect((report.steps ?? []).map((s) => s.status)).toEqual(['failed', 'interrupted']);
    expect(await callsNotAllowed(stack, mark)).toEqual([]);
  }, 120_000);
});
