import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDynamoClient, type DynaliteServer, startDynalite } from '../../functions/adapters/dynalite-server.ts';
import { DynamoRegistryStore } from '../../functions/adapters/dynamo-registry-store.ts';
import { createDocumentClient } from '../../functions/adapters/dynamo-run-store.ts';
import { openRegistryDatabase, SqliteRegistryStore } from '../../functions/adapters/sqlite-registry-store.ts';
import { ensureTable } from '../../functions/adapters/table-schema.ts';
import type { Workflow } from '../../functions/core/ir.ts';
import { MemoryRegistryStore } from '../../functions/core/memory-registry-store.ts';
import type { Schedule } from '../../functions/core/registry-model.ts';
import type { RegistryStore } from '../../functions/core/registry-store.ts';

const NOW = 1_800_000_000_000;
const HOUR = 3_600_000;
let counter = 0;
const uniqueName = (base: string) => `${base}-${process.pid}-${++counter}`;
const workflow = (command: string, description?: string): Workflow => ({
  ir_version: '0.1.0',
  ...(description ? { description } : {}),
  inputs: {},
  nodes: [{ id: 'a', type: 'shell', params: { command } }],
  edges: [],
  outputs: {},
});
const schedule = (workflowName: string, overrides: Partial<Schedule> = {}): Schedule => ({
  workflowName,
  expression: 'rate(5 minutes)',
  timezone: 'UTC',
  params: { name: 'Ada' },
  enabled: true,
  createdAt: NOW,
  updatedAt: NOW,
  ...overrides,
});

let dynalite: DynaliteServer;
let stateDir: string;
const TABLE = 'flowmend-registry-contract';
beforeAll(async () => {
  dynalite = await startDynalite();
  await ensureTable(createLocalDynamoClient(dynalite.endpoint), TABLE);
  stateDir = mkdtempSync(join(tmpdir(), 'flowmend-registry-'));
});
afterAll(async () => {
  await dynalite?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

describe.each([
  { name: 'MemoryRegistryStore', create: (): RegistryStore => new MemoryRegistryStore() },
  { name: 'SqliteRegistryStore', create: (): RegistryStore => new SqliteRegistryStore(openRegistryDatabase(stateDir)) },
  {
    name: 'DynamoRegistryStore',
    create: (): RegistryStore => new DynamoRegistryStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: TABLE }),
  },
])('RegistryStore contract: $name', ({ create }) => {
  let store: RegistryStore;
  beforeAll(() => {
    store = create();
  });

  it('gives every PUT of a name the next version and keeps the earlier ones unchanged', async () => {
    const name = uniqueName('greet');
    expect(await store.getWorkflow(name)).toBeUndefined();
    const first = await store.putWorkflow(name, workflow('echo one'), NOW);
    const second = await store.putWorkflow(name, workflow('echo two', 'second'), NOW + 1);
    expect([first.version, second.version]).toEqual([1, 2]);
    expect((await store.getWorkflow(name))?.workflow.nodes[0]?.params).toEqual({ command: 'echo two' });
    expect((await store.getWorkflow(name, 1))?.workflow.nodes[0]?.params).toEqual({ command: 'echo one' });
    expect(await store.getWorkflow(name, 3)).toBeUndefined();
  });

  it('gives concurrent PUTs of one name distinct versions', async () => {
    const name = uniqueName('race');
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => store.putWorkflow(name, workflow(`echo ${i}`), NOW)));
    expect(results.map((r) => r.version).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await store.getWorkflow(name))?.version).toBe(6);
  });

  it('lists each name once with its latest version, and forgets a deleted name with its schedule', async () => {
    const a = uniqueName('list-a');
    const b = uniqueName('list-b');
    await store.putWorkflow(a, workflow('echo a'), NOW);
    await store.putWorkflow(a, workflow('echo a2', 'the second a'), NOW + 5);
    await store.putWorkflow(b, workflow('echo b'), NOW);
    await store.putSchedule(schedule(a));
    const listed = (await store.listWorkflows()).filter((w) => [a, b].includes(w.name));
    expect(listed).toEqual([
      { name: a, latestVersion: 2, updatedAt: NOW + 5, description: 'the second a' },
      { name: b, latestVersion: 1, updatedAt: NOW },
    ]);
    expect(await store.deleteWorkflow(a)).toBe(true);
    expect(await store.deleteWorkflow(a)).toBe(false);
    expect(await store.getWorkflow(a)).toBeUndefined();
    expect(await store.getWorkflow(a, 1)).toBeUndefined();
    expect(await store.getSchedule(a)).toBeUndefined();
    expect((await store.listWorkflows()).map((w) => w.name)).not.toContain(a);
  });

  it('keeps one schedule per workflow: put replaces, delete says whether there was one', async () => {
    const name = uniqueName('sched');
    await store.putSchedule(schedule(name));
    await store.putSchedule(schedule(name, { expression: 'cron(0 9 ? * MON-FRI *)', enabled: false, updatedAt: NOW + 1 }));
    expect(await store.getSchedule(name)).toEqual(schedule(name, { expression: 'cron(0 9 ? * MON-FRI *)', enabled: false, updatedAt: NOW + 1 }));
    expect((await store.listSchedules()).filter((s) => s.workflowName === name)).toHaveLength(1);
    expect(await store.deleteSchedule(name)).toBe(true);
    expect(await store.deleteSchedule(name)).toBe(false);
    expect(await store.getSchedule(name)).toBeUndefined();
  });

  it('binds an idempotency key to the first run of concurrent claims, until it expires', async () => {
    const key = uniqueName('key');
    const claims = await Promise.all(
      Array.from({ length: 10 }, (_, i) => store.claimIdempotencyKey({ key, runId: `run-${i}-abcdef`, createdAt: NOW, expiresAt: NOW + 24 * HOUR }, NOW)),
    );
    const winners = claims.flatMap((c, i) => (c.claimed ? [`run-${i}-abcdef`] : []));
    expect(winners).toHaveLength(1);
    for (const c of claims) if (!c.claimed) expect(c.runId).toBe(winners[0]);
    const later = await store.claimIdempotencyKey({ key, runId: 'run-later-1', createdAt: NOW + 23 * HOUR, expiresAt: NOW + 47 * HOUR }, NOW + 23 * HOUR);
    expect(later).toEqual({ claimed: false, runId: winners[0] });
    const afterExpiry = await store.claimIdempotencyKey(
      { key, runId: 'run-next-day', createdAt: NOW + 25 * HOUR, expiresAt: NOW + 49 * HOUR },
      NOW + 25 * HOUR,
    );
    expect(afterExpiry).toEqual({ claimed: true });
  });
});
