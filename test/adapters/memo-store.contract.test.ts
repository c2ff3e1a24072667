import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDynamoClient, type DynaliteServer, startDynalite } from '../../functions/adapters/dynalite-server.ts';
import { DynamoMemoStore, memoPk } from '../../functions/adapters/dynamo-memo-store.ts';
import { createDocumentClient } from '../../functions/adapters/dynamo-run-store.ts';
import { openSqlite } from '../../functions/adapters/sqlite-database.ts';
import { SqliteMemoStore } from '../../functions/adapters/sqlite-memo-store.ts';
import { ensureTable } from '../../functions/adapters/table-schema.ts';
import { type MemoEntry, MemoryMemoStore, type MemoStore } from '../../functions/core/memo-store.ts';

// The MemoStore port (pflow's memo cache) against every adapter: memory, SQLite, DynamoDB over dynalite.
const NOW = 1_800_000_000_000;
const TABLE = 'flowmend-memo-contract';
let dynalite: DynaliteServer;
const sqliteDir = mkdtempSync(join(tmpdir(), 'flowmend-memo-'));
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

const entry = (key: string, overrides: Partial<MemoEntry> = {}): MemoEntry => ({
  key,
  nodeType: 'llm',
  outputs: { response: `answer for ${key}`, nested: { list: [1, 'two'] } },
  action: 'default',
  usage: { model: 'claude', input_tokens: 12, output_tokens: 5, cost_usd: 0.0001 },
  storedAt: NOW,
  expiresAt: NOW + 60_000,
  ...overrides,
});

let counter = 0;
const key = () => `k${process.pid}x${++counter}`;

describe.each([
  { name: 'MemoryMemoStore', create: (): MemoStore => new MemoryMemoStore() },
  {
    name: 'SqliteMemoStore',
    create: (): MemoStore => {
      const database = openSqlite(sqliteDir);
      databases.push(database);
      return new SqliteMemoStore(database.db, database.path);
    },
  },
  {
    name: 'DynamoMemoStore',
    create: (): MemoStore => new DynamoMemoStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: TABLE }),
  },
])('MemoStore contract: $name', ({ create }) => {
  let store: MemoStore;
  beforeAll(() => {
    store = create();
  });

  it('reads back what it stored, until it expires; an unknown key is undefined', async () => {
    const k = key();
    await store.putMemo(entry(k));
    expect(await store.getMemo(k, NOW)).toEqual(entry(k));
    expect(await store.getMemo(k, NOW + 59_999)).toEqual(entry(k));
    expect(await store.getMemo(k, NOW + 60_000)).toBeUndefined();
    expect(await store.getMemo(key(), NOW)).toBeUndefined();
  });

  it('replaces an entry with the next result of its key (an expired one, or a newer one)', async () => {
    const k = key();
    await store.putMemo(entry(k, { expiresAt: NOW + 1 }));
    await store.putMemo(entry(k, { outputs: { response: 'newer' }, storedAt: NOW + 5, expiresAt: NOW + 10_000 }));
    expect((await store.getMemo(k, NOW + 5_000))?.outputs).toEqual({ response: 'newer' });
  });

  it('keeps keys apart', async () => {
    const [a, b] = [key(), key()];
    await Promise.all([store.putMemo(entry(a)), store.putMemo(entry(b, { outputs: { response: 'b' } }))]);
    expect((await store.getMemo(a, NOW))?.outputs.response).toBe(`answer for ${a}`);
    expect((await store.getMemo(b, NOW))?.outputs.response).toBe('b');
  });
});

describe('DynamoMemoStore', () => {
  it("puts the table's TTL attribute on its item (epoch seconds), under its own key prefix", async () => {
    const client = createDocumentClient(createLocalDynamoClient(dynalite.endpoint));
    const k = key();
    await new DynamoMemoStore({ client, tableName: TABLE }).putMemo(entry(k));
    const { Item } = await client.send('GetItem', { TableName: TABLE, Key: { pk: memoPk(k), sk: 'MEMO' } });
    expect(Item?.expiresAt).toBe(Math.ceil((NOW + 60_000) / 1000));
  });
});
