import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDynamoClient, type DynaliteServer, startDynalite } from '../../functions/adapters/dynalite-server.ts';
import { DynamoFlowStore } from '../../functions/adapters/dynamo-flow-store.ts';
import { createDocumentClient } from '../../functions/adapters/dynamo-run-store.ts';
import { openSqlite } from '../../functions/adapters/sqlite-database.ts';
import { SqliteFlowStore } from '../../functions/adapters/sqlite-flow-store.ts';
import { ensureTable } from '../../functions/adapters/table-schema.ts';
import { changeFlow, type FlowStore, MemoryFlowStore } from '../../functions/core/flow/flow-store.ts';
import { acquireSlot, readSlots } from '../../functions/core/flow/slots.ts';

// The FlowStore port (flow control's keys) against every adapter: memory, SQLite, DynamoDB over dynalite.
const TABLE = 'flowmend-flow-contract';
let dynalite: DynaliteServer;
const sqliteDir = mkdtempSync(join(tmpdir(), 'flowmend-flow-'));
const databases: { db: { close(): void } }[] = [];

beforeAll(async () => {
  dynalite = await startDynalite();
  await ensureTable(createLocalDynamoClient(dynalite.endpoint), TABLE);
});
afterAll(async () => {
  await dynalite?.close();
  for (const d of databases) d.db.close();
  rmSync(sqliteDir, { recursive: true, force: true });
});

let counter = 0;
const key = () => `node/k${process.pid}x${++counter}`;

describe.each([
  { name: 'MemoryFlowStore', create: (): FlowStore => new MemoryFlowStore() },
  {
    name: 'SqliteFlowStore',
    create: (): FlowStore => {
      const database = openSqlite(sqliteDir);
      databases.push(database);
      return new SqliteFlowStore(database.db, database.path);
    },
  },
  {
    name: 'DynamoFlowStore',
    create: (): FlowStore => new DynamoFlowStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: TABLE }),
  },
])('FlowStore contract: $name', ({ create }) => {
  let store: FlowStore;
  beforeAll(() => {
    store = create();
  });

  it('writes a key at version 1 only while it is absent, then only over the version read', async () => {
    const k = key();
    expect(await store.getFlow(k)).toBeUndefined();
    expect(await store.putFlow(k, { holders: ['a'] }, 0)).toBe(true);
    expect(await store.putFlow(k, { holders: ['b'] }, 0)).toBe(false);
    expect(await store.getFlow(k)).toEqual({ version: 1, body: { holders: ['a'] } });
    expect(await store.putFlow(k, { holders: ['a', 'c'] }, 1)).toBe(true);
    expect(await store.putFlow(k, { holders: ['d'] }, 1)).toBe(false);
    expect(await store.getFlow(k)).toEqual({ version: 2, body: { holders: ['a', 'c'] } });
  });

  it('lets exactly `limit` of 12 racing acquirers hold a key (compare-and-swap, read again on a lost race)', async () => {
    const k = key();
    const now = 1_000;
    const decisions = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        changeFlow(store, k, (body) => {
          const made = acquireSlot(readSlots(body), {
            holder: { id: `run-${i}`, runId: `run-${i}` },
            limit: 3,
            now,
            leaseUntil: now + 60_000,
            waitId: `w${i}`,
            grantMs: 1_000,
          });
          return { body: made.slots, result: made.granted };
        }),
      ),
    );
    expect(decisions.filter(Boolean)).toHaveLength(3);
    const slots = readSlots((await store.getFlow(k))?.body);
    expect(slots.holders).toHaveLength(3);
    expect(slots.waiters).toHaveLength(9);
  });
});
