import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runIdOfOwner, SfnRunLauncher, sfnOwnerId } from '../../functions/adapters/sfn-run-launcher.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { createRun, newRunId } from '../../functions/core/run-lifecycle.ts';
import type { Owner } from '../../functions/core/run-model.ts';
import { type FakeSfn, startFakeSfn } from '../support/fake-sfn.ts';

const machines = {
  express: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-express',
  standard: 'arn:aws:states:us-east-1:123456789012:stateMachine:Flowmend-standard',
};
const MINUTE = 60_000;
const workflow = { ir_version: '0.1.0', inputs: {}, nodes: [{ id: 'a', type: 'shell', params: { command: 'echo hi' } }], edges: [], outputs: {} };

let sfn: FakeSfn;
beforeAll(async () => {
  sfn = await startFakeSfn();
});
afterAll(() => sfn.close());

/** A launcher over the fake, a store, a clock the test moves, and a run written as the API writes it. */
const setup = async (mode: 'express' | 'standard') => {
  let clock = Date.UTC(2026, 10, 23, 12);
  const store = new MemoryRunStore({ now: () => clock });
  const launcher = new SfnRunLauncher({ sfn: sfn.client, store, stateMachines: machines, now: () => clock });
  const runId = newRunId(clock);
  const owner = launcher.newOwner(runId, clock);
  await createRun(store, { runId, workflow, workflowName: 'hello', params: {}, owner, repairEnabled: true, maxRepairs: 3, mode, now: clock });
  return { store, launcher, runId, owner, advance: (ms: number) => (clock += ms) };
};
const executionsOf = (owner: Owner) => sfn.executions.filter((e) => e.name === owner.id);

describe('SfnRunLauncher', () => {
  it('names owners so that each is a valid execution name that leads back to its run', () => {
    const runId = 'a'.repeat(64);
    const id = sfnOwnerId(runId);
    expect(id.length).toBeLessThanOrEqual(80);
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(runIdOfOwner(id)).toBe(runId);
    expect(runIdOfOwner('pid-123@laptop')).toBeUndefined();
  });

  it('starts a Standard run as an execution named after its owner, once even when the launch is retried', async () => {
    const { launcher, runId, owner } = await setup('standard');
    await launcher.launch({ runId, owner, mode: 'standard' });
    await launcher.launch({ runId, owner, mode: 'standard' });
    const started = executionsOf(owner);
    expect(started).toHaveLength(1);
    expect(started[0]).toMatchObject({ stateMachineArn: machines.standard, status: 'RUNNING' });
    expect(JSON.parse(started[0]?.input ?? '')).toEqual({ kind: 'start', runId, owner: owner.id });
  });

  it('asks Step Functions whether a Standard run is alive, and stops its execution', async () => {
    const { launcher, runId, owner } = await setup('standard');
    await launcher.launch({ runId, owner, mode: 'standard' });
    expect(await launcher.isAlive(owner)).toBe(true);
    await launcher.stop(owner);
    expect(executionsOf(owner)[0]?.status).toBe('ABORTED');
    expect(await launcher.isAlive(owner)).toBe(false);
    await launcher.stop(owner); // already stopped: nothing to do
  });

  it('counts a Standard run whose execution failed as dead at once, whatever the age of its item', async () => {
    const { launcher, runId, owner } = await setup('standard');
    await launcher.launch({ runId, owner, mode: 'standard' });
    const execution = executionsOf(owner)[0];
    if (execution) execution.status = 'FAILED';
    expect(await launcher.isAlive(owner)).toBe(false);
  });

  it('falls back to the heartbeat for a Standard run that continued as a new execution', async () => {
    const { launcher, runId, owner, advance } = await setup('standard');
    await launcher.launch({ runId, owner, mode: 'standard' });
    const execution = executionsOf(owner)[0];
    if (execution) execution.status = 'SUCCEEDED';
    expect(await launcher.isAlive(owner)).toBe(true);
    advance(61 * MINUTE);
    expect(await launcher.isAlive(owner)).toBe(false);
  });

  it('judges an Express run by its item: alive while its owner wrote it within an execution lifetime', async () => {
    const { store, launcher, runId, owner, advance } = await setup('express');
    await launcher.launch({ runId, owner, mode: 'express' });
    expect(executionsOf(owner)[0]?.stateMachineArn).toBe(machines.express);
    advance(4 * MINUTE);
    expect(await launcher.isAlive(owner)).toBe(true);
    advance(3 * MINUTE);
    expect(await launcher.isAlive(owner)).toBe(false);

    const run = await store.getRun(runId);
    if (!run) throw new Error('run missing');
    await store.putRun({ ...run, updatedAt: run.updatedAt + 7 * MINUTE }, { ownerId: owner.id });
    expect(await launcher.isAlive(owner)).toBe(true);
    await store.putRun({ ...run, status: 'failed', updatedAt: run.updatedAt + 7 * MINUTE }, { ownerId: owner.id });
    expect(await launcher.isAlive(owner)).toBe(false);
    await launcher.stop(owner); // Express: the caller's conditional write stops it; no call fails
  });

  it('counts an owner that no longer owns its run as dead: a resume took the run over', async () => {
    const { store, launcher, runId, owner } = await setup('standard');
    await launcher.launch({ runId, owner, mode: 'standard' });
    const run = await store.getRun(runId);
    if (!run) throw new Error('run missing');
    const next = launcher.newOwner(runId, run.updatedAt);
    await store.putRun({ ...run, owner: next }, { ownerId: owner.id });
    expect(await launcher.isAlive(owner)).toBe(false);
    await launcher.launch({ runId, owner: next, mode: 'standard' });
    expect(await launcher.isAlive(next)).toBe(true);
    expect(executionsOf(next)).toHaveLength(1);
  });

  it('reports an execution that cannot start as a StoreError naming the run', async () => {
    const { store, runId, owner } = await setup('express');
    const closed = await startFakeSfn();
    await closed.close();
    const launcher = new SfnRunLauncher({ sfn: closed.client, store, stateMachines: machines, now: Date.now });
    await expect(launcher.launch({ runId, owner, mode: 'express' })).rejects.toThrow(new RegExp(`could not start an execution of run ${runId}`));
  });
});
