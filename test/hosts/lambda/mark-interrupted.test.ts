import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { sfnOwnerId } from '../../../functions/adapters/sfn-run-launcher.ts';
import { InvalidInputError } from '../../../functions/core/errors.ts';
import { continuedExecutionName } from '../../../functions/core/execution-names.ts';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import { MemoryRunStore } from '../../../functions/core/memory-run-store.ts';
import { createRun } from '../../../functions/core/run-lifecycle.ts';
import { makeMarkInterruptedHandler } from '../../../functions/hosts/lambda/mark-interrupted.ts';

const T0 = 1_800_000_000_000;
// The names the launcher and the Continue state really give executions.
const FIRST = sfnOwnerId('run-watch-1');
const CONTINUED = continuedExecutionName('run-watch-1', '0a1b2c3d4e5f');
const setup = async () => {
  const store = new MemoryRunStore();
  const workflow = WorkflowSchema.parse({ nodes: [{ id: 'a', type: 'shell', params: { command: 'true' } }] });
  await createRun(store, {
    runId: 'run-watch-1',
    workflow,
    workflowName: 'w',
    params: {},
    owner: { id: FIRST, since: T0 },
    repairEnabled: false,
    maxRepairs: 0,
    now: T0,
  });
  return { store, handler: makeMarkInterruptedHandler({ store, now: () => T0 + 60_000 }) };
};

describe('the interrupted-run watcher', () => {
  it.each([
    ['a first execution (the owner id)', FIRST],
    ['a continued execution', CONTINUED],
  ])('marks the run of a timed-out Standard execution (EventBridge), once: %s', async (_what, name) => {
    const { store, handler } = await setup();
    const event = {
      source: 'aws.states',
      'detail-type': 'Step Functions Execution Status Change',
      detail: { name, status: 'TIMED_OUT', stopDate: T0 + 30_000, error: null, cause: null },
    };
    expect(await handler(event)).toEqual({ runs: { 'run-watch-1': { marked: true } } });
    expect(await store.getRun('run-watch-1')).toMatchObject({ status: 'interrupted', lastError: { code: 'States.TIMED_OUT' } });
    expect((await handler(event)).runs['run-watch-1']).toMatchObject({ marked: false });
  });

  it('reads the Express log subscription (gzipped) and ignores executions flowmend did not name', async () => {
    const { store, handler } = await setup();
    const record = (name: string, type: string) => ({
      timestamp: T0 + 30_000,
      message: JSON.stringify({
        type,
        execution_arn: `arn:aws:states:us-east-1:1:express:Flowmend-express:${name}:id-1`,
        details: { error: 'States.Timeout' },
      }),
    });
    const logEvents = [record('not a run id!', 'ExecutionTimedOut'), record('run-watch-1', 'ExecutionAborted'), record(CONTINUED, 'ExecutionTimedOut')];
    const data = gzipSync(JSON.stringify({ logEvents })).toString('base64');
    expect(await handler({ awslogs: { data } })).toEqual({ runs: { 'run-watch-1': { marked: true } } });
    expect((await store.getRun('run-watch-1'))?.status).toBe('interrupted');
  });

  it('leaves a run that another execution wrote after this one stopped', async () => {
    const { store, handler } = await setup();
    const event = {
      source: 'aws.states',
      'detail-type': 'Step Functions Execution Status Change',
      detail: { name: FIRST, status: 'FAILED', stopDate: T0 - 1 },
    };
    expect((await handler(event)).runs['run-watch-1']).toMatchObject({ marked: false });
    expect((await store.getRun('run-watch-1'))?.status).toBe('running');
  });

  it("leaves a run resumed by a new owner when the previous owner's execution reports its end late", async () => {
    // A run fails (its execution ends FAILED a moment after the store says failed), and a resume claims it
    // at once under a new owner: the late end of the old execution is not the resumed run's.
    const { store, handler } = await setup();
    const run = await store.getRun('run-watch-1');
    if (!run) throw new Error('no run');
    const resumedBy = sfnOwnerId('run-watch-1');
    await store.putRun({ ...run, owner: { id: resumedBy, since: T0 + 1_000 }, updatedAt: T0 + 1_000 }, { ownerId: FIRST });
    const late = (name: string) => ({
      timestamp: T0 + 2_000,
      message: JSON.stringify({
        type: 'ExecutionFailed',
        execution_arn: `arn:aws:states:us-east-1:1:express:Flowmend-express:${name}:id-1`,
        details: { error: 'States.TaskFailed' },
      }),
    });
    const logs = (name: string) => ({ awslogs: { data: gzipSync(JSON.stringify({ logEvents: [late(name)] })).toString('base64') } });
    expect((await handler(logs(FIRST))).runs['run-watch-1']).toMatchObject({ marked: false, reason: expect.stringContaining('owned by') });
    expect((await store.getRun('run-watch-1'))?.status).toBe('running');
    // The new owner's own execution dying is still seen.
    expect((await handler(logs(resumedBy))).runs['run-watch-1']).toEqual({ marked: true });
  });

  it('rejects an event it cannot read, saying what it expects', async () => {
    const { handler } = await setup();
    await expect(handler({ hello: 1 })).rejects.toThrow(InvalidInputError);
    await expect(handler({ hello: 1 })).rejects.toThrow(/EventBridge/);
  });
});
