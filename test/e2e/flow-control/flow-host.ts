// The local host as `serve` runs it, in the test's process: SQLite on disk, the flow store beside it, a
// launcher that drives runs in the background, the wait waker on a fast tick, and a clock a test may move on.
import { readFileSync } from 'node:fs';
import { openSqlite } from '../../../functions/adapters/sqlite-database.ts';
import { SqliteFlowStore } from '../../../functions/adapters/sqlite-flow-store.ts';
import { SqliteRunStore } from '../../../functions/adapters/sqlite-run-store.ts';
import type { RunItem } from '../../../functions/core/run-model.ts';
import { WaitWaker } from '../../../functions/hosts/api/wait-waker.ts';
import { launchWake } from '../../../functions/hosts/local/flow-wakeups.ts';
import { LocalHost, type LocalHostOptions } from '../../../functions/hosts/local/local-host.ts';
import { LocalRunLauncher } from '../../../functions/hosts/local/local-launcher.ts';

export { maxOverlap } from '../../support/overlap.ts';

export interface FlowHost {
  host: LocalHost;
  launcher: LocalRunLauncher;
  store: SqliteRunStore;
  flow: SqliteFlowStore;
  /** Moves the host's clock (the engine's and the waker's) this far ahead of the wall clock. */
  skew(ms: number): void;
  now(): number;
  tick(): Promise<string[]>;
  /** Reads runs until each is in a final state (or `timeoutMs` passes), and returns them. */
  settled(runIds: readonly string[], timeoutMs?: number): Promise<RunItem[]>;
  close(): Promise<void>;
}

export const startFlowHost = (stateDir: string, options: Partial<LocalHostOptions> = {}, tickMs = 50): FlowHost => {
  const database = openSqlite(stateDir);
  const store = new SqliteRunStore(database);
  const flow = new SqliteFlowStore(database.db, database.path);
  let offset = 0;
  const now = () => Date.now() + offset;
  let launcher: LocalRunLauncher | undefined;
  const host = new LocalHost({
    store,
    now,
    retryIntervalMs: 0,
    validateDefinition: false,
    flow: { store: flow },
    wakeups: { schedule: async (request) => (request.at <= now() ? launchWake(launcher, request) : undefined) },
    ...options,
  });
  launcher = new LocalRunLauncher(host);
  const waker = new WaitWaker({ store: host.store, launcher });
  const tick = () => waker.tick(now());
  const timer = setInterval(() => void tick().catch(() => undefined), tickMs);
  const settled = async (runIds: readonly string[], timeoutMs = 60_000): Promise<RunItem[]> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const runs = await Promise.all(runIds.map(async (id) => (await store.getRun(id)) as RunItem));
      if (runs.every((r) => r && ['succeeded', 'failed', 'cancelled'].includes(r.status))) return runs;
      if (Date.now() > deadline) throw new Error(`runs not settled: ${runs.map((r) => `${r.runId}=${r.status}`).join(', ')}`);
      await new Promise((done) => setTimeout(done, 50));
    }
  };
  return {
    host,
    launcher,
    store,
    flow,
    skew: (ms) => {
      offset = ms;
    },
    now,
    tick,
    settled,
    close: async () => {
      clearInterval(timer);
      await launcher?.settle();
      store.close();
    },
  };
};

/** `<nanoseconds> <what> <who>` lines that shell nodes append, as [ms, what, who]. */
export const readMarks = (path: string): { at: number; what: string; who: string }[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [ns, what, who] = line.split(' ');
      return { at: Number(BigInt(ns as string) / 1000n) / 1000, what: what as string, who: who as string };
    });
