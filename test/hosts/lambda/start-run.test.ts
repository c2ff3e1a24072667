import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../../functions/core/errors.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { makeStartRunHandler } from '../../../functions/hosts/lambda/start-run.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';

const machines = {
  express: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-express',
  standard: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-standard',
};

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
    expect(started).toEqual([{ arn: machines.express, name: run?.owner?.id, input: { kind: 'start', runId: result.runId, owner: run?.owner?.id } }]);
    expect(run?.owner?.id).toMatch(new RegExp(`^sfn-${result.runId}-[0-9a-f]{8}$`));
  });

  it('starts a run with a node that may outlast an Express execution on Standard, or where asked', async () => {
    const { started, handler } = setup();
    expect((await handler({ workflow: echo(600) })).mode).toBe('standard');
    expect((await handler({ workflow: echo(), mode: 'standard' })).mode).toBe('standard');
    // A batch item's retry_wait is waited inside the execution: a long one outlasts Express as a long node does.
    const waiting = { nodes: [{ ...echo().nodes[0], batch: { items: [1, 2], max_retries: 2, retry_wait: 600 } }] };
    expect((await handler({ workflow: waiting })).mode).toBe('standard');
    expect(started.map((s) => s.arn)).toEqual([machines.standard, machines.standard, machines.standard]);
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

  it('answers a retried start of the same run id with the run it wrote, starting no second execution once it advanced', async () => {
    const { store, started, handler } = setup();
    const first = await handler({ workflow: echo(), workflowName: 'hello', runId: 'retried-run-1' });
    const run = await store.getRun('retried-run-1');
    if (!run) throw new Error('run missing');
    // The first execution's first Advance wrote its run_started event.
    await store.putRun({ ...run, eventSeq: 1 }, { ownerId: run.owner?.id ?? '' });
    const again = await handler({ workflow: echo(), workflowName: 'hello', runId: 'retried-run-1' });
    expect(again).toEqual({ runId: first.runId, mode: 'express' });
    expect(started).toHaveLength(1);
  });

  it('starts a retried run that no execution advanced under a new owner, so an execution the first try started stops', async () => {
    const { store, started, handler } = setup();
    await handler({ workflow: echo(), runId: 'retried-run-2' });
    const firstOwner = (await store.getRun('retried-run-2'))?.owner?.id;
    await handler({ workflow: echo(), runId: 'retried-run-2' });
    const secondOwner = (await store.getRun('retried-run-2'))?.owner?.id;
    expect(secondOwner).not.toBe(firstOwner);
    expect(started.map((s) => s.name)).toEqual([firstOwner, secondOwner]);
  });

  it("a retried start that races the first execution's first Advance does not undo its step or start a second execution", async () => {
    const store = new MemoryRunStore();
    const started: string[] = [];
    let raceOnRead = false;
    // The first execution's first Advance commits (same owner, seq 1, its events) right after the
    // retried start has read the run and before it takes it over: the narrow window of the race.
    const racing = Object.assign(Object.create(store) as MemoryRunStore, {
      getRun: async (runId: string) => {
        const read = await store.getRun(runId);
        if (raceOnRead && read) {
          raceOnRead = false;
          await store.putRun({ ...read, seq: 1, eventSeq: 2 }, { ownerId: read.owner?.id ?? '' });
        }
        return read;
      },
    });
    const handler = makeStartRunHandler({
      store: racing,
      catalog: builtinCatalog,
      now: () => Date.UTC(2026, 0, 2, 3, 4, 5),
      stateMachines: machines,
      startExecution: async (arn, name) => {
        started.push(name);
        return `${arn}:${name}`;
      },
    });
    const first = await handler({ workflow: echo(), runId: 'raced-run' });
    const firstOwner = (await store.getRun('raced-run'))?.owner?.id;
    raceOnRead = true;
    const again = await handler({ workflow: echo(), runId: 'raced-run' });
    expect(again).toEqual({ runId: first.runId, mode: 'express' });
    expect(started).toEqual([firstOwner]);
    expect(await store.getRun('raced-run')).toMatchObject({ seq: 1, eventSeq: 2, owner: { id: firstOwner } });
  });

  it('refuses a run id already taken by another workflow or other params, and starts nothing', async () => {
    const { started, handler } = setup();
    const greet = { inputs: { name: { type: 'string' } }, nodes: [{ id: 'a', type: 'shell', params: { command: 'echo ${name}' } }] };
    await handler({ workflow: greet, runId: 'taken-run-1', params: { name: 'ada' } });
    await expect(handler({ workflow: echo(30), runId: 'taken-run-1' })).rejects.toThrow(/run id 'taken-run-1' is taken/);
    await expect(handler({ workflow: greet, runId: 'taken-run-1', params: { name: 'bob' } })).rejects.toThrow(/run id 'taken-run-1' is taken/);
    expect(started).toHaveLength(1);
  });
});
