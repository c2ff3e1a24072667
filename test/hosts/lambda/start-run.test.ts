import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../functions/core/errors.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { makeStartRunHandler } from '../../../functions/hosts/lambda/start-run.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';

const machines = { express: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-express', standard: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-standard' };

const setup = () => {
  const store = new MemoryRunStore();
  const started: { arn: string; name: string; input: unknown }[] = [];
  const handler = makeStartRunHandler({
    store,
    catalog: builtinCatalog,
    now: () => Date.UTC(2026, 0, 2, 3, 4, 5),
    stateMachines: machines,
    startExecution: async (arn, name, input) => {
      started.push({ arn, name, input: JSON.parse(input) });
      return `${arn.replace(':stateMachine:', ':execution:')}:${name}`;
    },
  });
  return { store, started, handler };
};
const echo = (timeout_s?: number) => ({ nodes: [{ id: 'a', type: 'shell', params: { command: 'echo hi', ...(timeout_s ? { timeout_s } : {}) } }] });

describe('start-run handler', () => {
  it('writes the run and starts it on Express when every node fits', async () => {
    const { store, started, handler } = setup();
    const result = await handler({ workflow: echo(), workflowName: 'hello' });
    expect(result.mode).toBe('express');
    const run = await store.getRun(result.runId);
    expect(run).toMatchObject({ status: 'running', workflowName: 'hello', mode: 'express' });
    expect(started).toEqual([{ arn: machines.express, name: result.runId, input: { kind: 'start', runId: result.runId, owner: run?.owner?.id } }]);
  });

  it('starts a run with a node that may outlast an Express execution on Standard, or where asked', async () => {
    const { started, handler } = setup();
    expect((await handler({ workflow: echo(600) })).mode).toBe('standard');
    expect((await handler({ workflow: echo(), mode: 'standard' })).mode).toBe('standard');
    expect(started.map((s) => s.arn)).toEqual([machines.standard, machines.standard]);
  });

  it('rejects a workflow that does not validate when repair is off, naming the problem, and starts nothing', async () => {
    const { started, handler } = setup();
    const bad = { nodes: [{ id: 'a', type: 'shel', params: { command: 'echo' } }] };
    await expect(handler({ workflow: bad, repairEnabled: false })).rejects.toThrow(InvalidInputError);
    await expect(handler({ workflow: bad, repairEnabled: false })).rejects.toThrow(/shel/);
    await expect(handler({ workflow: { nodes: 'none' } })).rejects.toThrow(/nodes/);
    await expect(handler({ workflow: echo(), extra: 1 })).rejects.toThrow(/extra/);
    expect(started).toEqual([]);
  });

  it('with repair on, starts a workflow that does not validate: the engine repairs it before any node runs', async () => {
    const { started, handler } = setup();
    const bad = { nodes: [{ id: 'a', type: 'shell', params: { comand: 'echo' } }] };
    await handler({ workflow: bad });
    expect(started).toHaveLength(1);
  });

  it('coerces params to the declared input types and fills defaults, as the CLI does; a missing input is rejected', async () => {
    const { store, handler } = setup();
    const workflow = {
      inputs: { count: { type: 'number' }, name: { type: 'string', required: false, default: 'world' } },
      nodes: [{ id: 'a', type: 'shell', params: { command: 'echo ${name} ${count}' } }],
    };
    const { runId } = await handler({ workflow, params: { count: '3' } });
    expect((await store.getRun(runId))?.params).toEqual({ count: 3, name: 'world' });
    await expect(handler({ workflow })).rejects.toThrow(/missing required input 'count'/);
  });

  it('is idempotent for a run id: a retried start neither fails nor starts twice; another request with the id is refused', async () => {
    const { store, started, handler } = setup();
    const first = await handler({ workflow: echo(), runId: 'retry-run-1' });
    // The first start's answer was lost; the caller retries with the same id.
    const again = await handler({ workflow: echo(), runId: 'retry-run-1' });
    expect(again).toEqual(first);
    // Not advanced yet: started again under the same name, which Step Functions deduplicates (Standard) ...
    expect(started.map((s) => s.name)).toEqual(['retry-run-1', 'retry-run-1']);
    expect(new Set(started.map((s) => JSON.stringify(s.input))).size).toBe(1);
    // ... and once the run has been advanced, not started at all.
    const run = await store.getRun('retry-run-1');
    if (run) await store.putRun({ ...run, updatedAt: run.updatedAt + 1 }, {});
    expect(await handler({ workflow: echo(), runId: 'retry-run-1' })).toEqual(first);
    expect(started).toHaveLength(2);
    await expect(handler({ workflow: echo(5), runId: 'retry-run-1' })).rejects.toThrow(/already taken by a different run/);
  });

  it('takes ExecutionAlreadyExists from Step Functions as started', async () => {
    const store = new MemoryRunStore();
    const handler = makeStartRunHandler({
      store, catalog: builtinCatalog, now: () => 1, stateMachines: machines,
      startExecution: async () => {
        throw Object.assign(new Error('Execution Already Exists'), { name: 'ExecutionAlreadyExists' });
      },
    });
    expect(await handler({ workflow: echo(), runId: 'retry-run-2' })).toEqual({ runId: 'retry-run-2', mode: 'express', executionArn: `${machines.express.replace(':stateMachine:', ':execution:')}:retry-run-2` });
  });
});
