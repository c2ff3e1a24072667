import { describe, expect, it } from 'vitest';
import { ObservedRunStore } from '../../../functions/adapters/observed-run-store.ts';
import { MemoryRunStore, StaleRunError } from '../../../functions/core/index.ts';
import type { IrVersionItem } from '../../../functions/core/run-model.ts';
import { ReadOnceRunStore } from '../../../functions/hosts/cli/read-once-run-store.ts';
import { aNodeRecord, aRun } from '../../support/builders.ts';

const NOW = Date.now();

/** A memory store under a read counter, and the read-once store over them. */
const stores = () => {
  const counted = new ObservedRunStore(new MemoryRunStore());
  return { counted, store: new ReadOnceRunStore(counted) };
};

const anIr = (runId: string, version: number): IrVersionItem => ({
  runId,
  version,
  source: 'original',
  createdAt: NOW,
  ir: { ir_version: '0.1.0', inputs: {}, nodes: [{ id: 'a', type: 'shell', params: { command: 'echo hi' } }], edges: [], outputs: {} },
});

describe('ReadOnceRunStore', () => {
  it('lists a run’s records from the store once, then with every record written through it since', async () => {
    const { counted, store } = stores();
    const run = aRun({ runId: 'r1', createdAt: NOW, updatedAt: NOW });
    await counted.putRun(run, { notExists: true });
    await counted.putRecords([aNodeRecord({ runId: 'r1', seq: 1 }), aNodeRecord({ runId: 'r1', seq: 2 })]);
    expect((await store.listRecords('r1')).map((r) => r.seq)).toEqual([1, 2]);
    const reads = counted.counters.reads;

    await store.putRecord(aNodeRecord({ runId: 'r1', seq: 4, status: 'running' }));
    await store.putRecords([aNodeRecord({ runId: 'r1', seq: 3 })]);
    await store.commitAdvance({
      run: { ...run, seq: 5 },
      condition: { seq: 0 },
      events: [],
      records: [aNodeRecord({ runId: 'r1', seq: 4, status: 'completed' })],
    });
    const listed = await store.listRecords('r1');
    expect(counted.counters.reads).toBe(reads);
    expect(listed.map((r) => [r.seq, r.status])).toEqual([
      [1, 'running'],
      [2, 'running'],
      [3, 'running'],
      [4, 'completed'],
    ]);
    // What it answers is what the store holds.
    expect(listed).toEqual(await counted.listRecords('r1'));
  });

  it('keeps no record whose conditional write the store refused', async () => {
    const { counted, store } = stores();
    await counted.putRecords([aNodeRecord({ runId: 'r2', seq: 1, status: 'running' })]);
    await store.listRecords('r2');
    await expect(store.putRecord(aNodeRecord({ runId: 'r2', seq: 1, status: 'completed' }), 'failed')).rejects.toBeInstanceOf(StaleRunError);
    expect((await store.listRecords('r2')).map((r) => r.status)).toEqual(['running']);
  });

  it('reads each workflow version once; a version it wrote is not read back', async () => {
    const { counted, store } = stores();
    await counted.putIrVersion(anIr('r3', 0));
    const first = await store.getIrVersion('r3', 0);
    const reads = counted.counters.reads;
    expect(await store.getIrVersion('r3', 0)).toBe(first);
    await store.putIrVersion(anIr('r3', 1));
    expect(await store.getIrVersion('r3', 1)).toEqual(anIr('r3', 1));
    expect(counted.counters.reads).toBe(reads);
    expect(await store.getIrVersion('r3', 2)).toBeUndefined();
  });
});
