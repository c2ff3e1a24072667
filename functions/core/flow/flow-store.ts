import { TransientError } from '../errors.ts';

/** A key's flow-control document and its version (1 for the first write). */
export interface FlowDocument {
  body: unknown;
  version: number;
}

/**
 * Flow-control state shared by runs (a key's slots, its rate window, a debounced start): one small
 * document per key, beside the runs (SQLite's database, DynamoDB's table), changed by compare-and-swap.
 * Every decision about it is core's (flow/slots.ts, flow/rate-window.ts); a store only keeps it.
 */
export interface FlowStore {
  getFlow(key: string): Promise<FlowDocument | undefined>;
  /** Writes `body` as version `version + 1` if the key is still at `version` (0: absent); false when another writer went first. */
  putFlow(key: string, body: unknown, version: number): Promise<boolean>;
  /**
   * Optional: reads, changes and writes a key in one atomic step (a SQLite transaction), so that writers on the
   * same key never retry. Stores without it are changed by compare-and-swap (`changeFlow`).
   */
  changeAtomically?<T>(key: string, change: (body: unknown) => { body: unknown | undefined; result: T }): Promise<T>;
}

/** How many times one change is retried against other writers before it gives up (each try is a read and a conditional write). */
const CAS_ATTEMPTS = 50;

/**
 * Reads a key's document, computes the change and writes it if nobody wrote in between; otherwise reads
 * again and recomputes. `change` is pure: it returns the new body (or undefined to write nothing) and a result.
 */
export const changeFlow = async <T>(store: FlowStore, key: string, change: (body: unknown) => { body: unknown | undefined; result: T }): Promise<T> => {
  if (store.changeAtomically) return store.changeAtomically(key, change);
  for (let attempt = 0; attempt < CAS_ATTEMPTS; attempt += 1) {
    const current = await store.getFlow(key);
    const { body, result } = change(current?.body);
    if (body === undefined) return result;
    if (await store.putFlow(key, body, current?.version ?? 0)) return result;
    // Writers that lost together back off apart (full jitter), or they keep losing together.
    await new Promise((done) => setTimeout(done, Math.random() * Math.min(200, 5 * 2 ** attempt)));
  }
  // The engine's Retry takes it up again (TransientError is retryable), as for any store that is busy.
  throw new TransientError(`flow-control key '${key}' changed under ${CAS_ATTEMPTS} attempts in a row`);
};

/** Flow-control documents in memory (tests, and a host without a store of its own). */
export class MemoryFlowStore implements FlowStore {
  private readonly docs = new Map<string, FlowDocument>();
  async getFlow(key: string): Promise<FlowDocument | undefined> {
    const doc = this.docs.get(key);
    return doc && structuredClone(doc);
  }
  async putFlow(key: string, body: unknown, version: number): Promise<boolean> {
    if ((this.docs.get(key)?.version ?? 0) !== version) return false;
    this.docs.set(key, { body: structuredClone(body), version: version + 1 });
    return true;
  }
}
