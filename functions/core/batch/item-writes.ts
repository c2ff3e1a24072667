import type { NodeRecord } from '../run-model.ts';
import type { RunStore } from '../run-store.ts';

interface Waiting {
  records: NodeRecord[];
  settle: { resolve: () => void; reject: (error: unknown) => void }[];
}

const waiting = new WeakMap<RunStore, Waiting>();

/**
 * Writes an item record, together with the other items' records that reach this process in the same turn
 * of the event loop (a chunk's items finishing at once on the local host): one store write, so one
 * SQLite transaction and one fsync for them all instead of one each. Each call still resolves only once its
 * record is durable. On AWS each RecordItem is its own Lambda call, so each writes alone.
 * The write is unconditional: a retried RecordItem writes the same item again.
 */
export const writeItemRecord = (store: RunStore, record: NodeRecord): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    let group = waiting.get(store);
    if (!group) {
      const fresh: Waiting = { records: [], settle: [] };
      group = fresh;
      waiting.set(store, fresh);
      setTimeout(() => {
        waiting.delete(store);
        store.putRecords(fresh.records).then(
          () => {
            for (const s of fresh.settle) s.resolve();
          },
          (error: unknown) => {
            for (const s of fresh.settle) s.reject(error);
          },
        );
      }, 0);
    }
    group.records.push(record);
    group.settle.push({ resolve, reject });
  });
