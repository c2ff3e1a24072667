import type { MessagePort } from 'node:worker_threads';
import { StoreUnavailableError } from '../core/index.ts';
import { errorOf, type SqliteWriter, type WriteFailure, type WriteOp } from './sqlite-writes.ts';

/** A write as it goes to the writer thread, and its answer. */
export interface WriteRequest {
  id: number;
  operation: string;
  ops: readonly WriteOp[];
}
export interface WriteReply {
  id: number;
  failure?: WriteFailure;
}

interface Pending {
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * A store's writes sent to serve's writer thread (sqlite-writer-thread.ts) over a MessagePort, the writes of
 * one turn of the event loop in one message. Each promise settles when the writer has committed its write
 * (or failed it, with the error's class kept). If the thread stops, the writes it has not answered fail
 * with StoreUnavailableError (each may or may not be on disk: the engine's next step finds out, as after a
 * crash) and later writes go through this thread's own connection.
 *
 * A write made alone (the only one of its turn, with none of this store's in flight) is committed on this
 * thread's own connection instead: a run driven by itself makes one commit a step, and the two wake-ups of
 * an idle writer thread cost it ~1 ms of each (a 1,000-step chain through serve took twice as long). Writes
 * of several runs at once go to the writer thread, one transaction and one fsync for all of them, off this
 * thread. A store's writes still commit in the order it made them: a write takes the other path only once
 * none is in flight on the first.
 */
export class ThreadWriter implements SqliteWriter {
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private outbox: WriteRequest[] = [];
  /** This thread's own commits (writes made alone, and every write once the thread has stopped), and how many are in flight. */
  private own: SqliteWriter | undefined;
  private ownInFlight = 0;
  /** The writer thread went away: every write commits here from then on. */
  private threadStopped = false;
  private closed = false;

  constructor(
    private readonly port: MessagePort,
    private readonly path: string,
    private readonly fallback: () => SqliteWriter,
    private readonly options: { aloneOnOwnConnection: boolean } = { aloneOnOwnConnection: true },
  ) {
    port.on('message', (replies: readonly WriteReply[]) => {
      for (const { id, failure } of replies) {
        const waiting = this.pending.get(id);
        if (waiting === undefined) continue;
        this.pending.delete(id);
        if (failure === undefined) waiting.resolve();
        else waiting.reject(errorOf(failure));
      }
      // An idle port does not keep the process alive.
      if (this.pending.size === 0) port.unref();
    });
    port.once('close', () => this.lost());
    port.unref();
  }

  submit(operation: string, ops: readonly WriteOp[]): Promise<void> {
    if (this.threadStopped) return this.ownWriter().submit(operation, ops);
    return new Promise((resolve, reject) => {
      this.nextId += 1;
      this.pending.set(this.nextId, { resolve, reject });
      this.port.ref();
      this.outbox.push({ id: this.nextId, operation, ops });
      if (this.outbox.length === 1) setImmediate(() => this.send());
    });
  }

  close(): void {
    this.closed = true;
    this.own?.close();
    this.port.close();
  }

  private send(): void {
    const requests = this.outbox;
    this.outbox = [];
    // Here: writes queued before the thread stopped; the only write of its turn, with none in flight to the thread
    // (every one pending is of this turn); or writes made while this thread's own commits are in flight (they stay
    // in order behind them).
    const threadIdle = this.pending.size === requests.length;
    if (this.threadStopped || (this.options.aloneOnOwnConnection && (this.ownInFlight > 0 || (requests.length === 1 && threadIdle)))) {
      this.commitOwn(requests);
      return;
    }
    this.port.postMessage(requests);
  }

  private ownWriter(): SqliteWriter {
    this.own ??= this.fallback();
    return this.own;
  }

  private commitOwn(requests: readonly WriteRequest[]): void {
    const own = this.ownWriter();
    for (const { id, operation, ops } of requests) {
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      if (waiting === undefined) continue;
      this.ownInFlight += 1;
      own
        .submit(operation, ops)
        .then(waiting.resolve, waiting.reject)
        .finally(() => {
          this.ownInFlight -= 1;
        });
    }
    if (this.pending.size === 0) this.port.unref();
  }

  private lost(): void {
    if (this.closed) return;
    this.threadStopped = true;
    const queued = new Set(this.outbox.map((request) => request.id));
    for (const [id, waiting] of this.pending) {
      if (queued.has(id)) continue;
      this.pending.delete(id);
      waiting.reject(
        new StoreUnavailableError(`the database writer thread of ${this.path} stopped before it answered: this write may or may not be on disk`, {
          details: { path: this.path },
        }),
      );
    }
  }
}
