import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../../functions/core/ir.ts';
import { parseWorkflow } from '../../../functions/core/parse-workflow.ts';
import { type FlowHost, startFlowHost } from './flow-host.ts';

const workflowOf = (input: WorkflowInput) => {
  const parsed = parseWorkflow(input);
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.workflow;
};

describe('debounce and singleton on starts, on the local host', () => {
  let dir: string;
  let flow: FlowHost;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'fm-starts-'));
    flow = startFlowHost(join(dir, 'state'));
  });
  afterAll(async () => {
    await flow.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = (workflow: ReturnType<typeof workflowOf>, params: Record<string, unknown>) =>
    flow.host.start({ workflow, workflowName: 'starts', params, repairEnabled: false, maxRepairs: 0 });

  it('10 starts within the debounce window give one run, with the last params, a period after the last start', async () => {
    const workflow = workflowOf({
      inputs: { repo: { type: 'string' }, push: { type: 'string' } },
      debounce: { key: 'deploy-${repo}', period_s: 0.5 },
      nodes: [{ id: 'deploy', type: 'shell', params: { command: 'echo deploying ${push}' } }],
    });
    const reports = [];
    for (let i = 0; i < 10; i += 1) reports.push(await start(workflow, { repo: 'flowmend', push: `p${i}` }));
    expect(reports.map((r) => r.status)).toEqual(Array(10).fill('waiting'));
    expect(reports[9]?.waiting).toMatchObject({ kind: 'debounce' });
    const lastStart = Date.now();
    const runs = await flow.settled(reports.map((r) => r.run_id));
    expect(runs.map((r) => r.status)).toEqual([...Array(9).fill('cancelled'), 'succeeded']);
    expect(runs.slice(0, 9).map((r) => r.lastError?.code)).toEqual(Array(9).fill('DEBOUNCED'));
    const survivor = await flow.host.report(reports[9]?.run_id as string);
    expect(survivor?.result).toMatchObject({ stdout: 'deploying p9' });
    expect((await flow.store.listRecords(survivor?.run_id as string))[0]?.startedAt).toBeGreaterThanOrEqual(lastStart + 400);
    expect(survivor?.metrics.flow?.waits).toBe(1);
  });

  it("a singleton start while one runs is skipped ('skip'), or cancels the running one ('cancel-running')", async () => {
    const skip = workflowOf({
      singleton: { key: 'nightly', mode: 'skip' },
      nodes: [{ id: 'work', type: 'shell', params: { command: 'sleep 1; echo first' } }],
    });
    const first = start(skip, {});
    await new Promise((done) => setTimeout(done, 500));
    const second = await start(skip, {});
    expect(second.status).toBe('cancelled');
    expect(second.errors[0]).toMatchObject({ code: 'SINGLETON_SKIPPED' });
    expect((await first).status).toBe('succeeded');
    const replace = workflowOf({ ...skip, singleton: { key: 'reindex', mode: 'cancel-running' } });
    const older = start(replace, {});
    await new Promise((done) => setTimeout(done, 500));
    const newer = await start(replace, {});
    expect(newer.status).toBe('succeeded');
    const replaced = await older;
    expect(replaced.status).toBe('cancelled');
    expect(replaced.errors[0]).toMatchObject({ code: 'SINGLETON_REPLACED' });
  });
});
