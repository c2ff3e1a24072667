import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalDynamoClient, type DynaliteServer, startDynalite } from '../../functions/adapters/dynalite-server.ts';
import { createDocumentClient, DynamoRunStore } from '../../functions/adapters/dynamo-run-store.ts';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import { findSqliteWriterFile, type SqliteWriterThread, startSqliteWriter } from '../../functions/adapters/sqlite-writer-thread.ts';
import { ensureTable, RUN_SK, runPk, stepSk } from '../../functions/adapters/table-schema.ts';
import { commitAdvance } from '../../functions/core/advance-commit.ts';
import { StaleRunError, StoreError } from '../../functions/core/errors.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { IrVersionItem, NodeRecord, RunEvent, RunItem } from '../../functions/core/run-model.ts';
import type { RunStore } from '../../functions/core/run-store.ts';
import { aNodeRecord, aRun } from '../support/builders.ts';
import { startDynamoProxy } from './dynamo-proxy.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NOW = Date.now();
let idCounter = 0;
const newRunId = () => `run_${process.pid}_${++idCounter}`;

const makeRun = (overrides: Partial<RunItem> = {}): RunItem =>
  aRun({
    runId: newRunId(),
    workflowName: 'greet',
    params: { name: 'world' },
    createdAt: NOW,
    updatedAt: NOW,
    owner: { id: 'owner-a', pid: 123, host: 'laptop', since: NOW },
    ...overrides,
  });

const aRecord = (runId: string, seq: number, overrides: Partial<NodeRecord> = {}): NodeRecord =>
  aNodeRecord({ runId, seq, startedAt: NOW + seq, ...overrides });

const makeIr = (runId: string, version: number, command = 'echo hi'): IrVersionItem => ({
  runId,
  version,
  source: version === 0 ? 'original' : 'rules',
  createdAt: NOW,
  ir: { ir_version: '0.1.0', inputs: {}, nodes: [{ id: 'a', type: 'shell', params: { command } }], edges: [], outputs: {} },
  ...(version > 0 && { reason: 'fixed a typo', diff: ['a.params.command changed'], nodesChanged: ['a'] }),
});

const makeEvent = (runId: string, n: number): Extract<RunEvent, { type: 'node_interrupted' }> => ({
  runId,
  key: String(n).padStart(8, '0'),
  at: NOW + n,
  type: 'node_interrupted',
  nodeId: `n${n}`,
  seq: n,
  message: `event ${n}`,
});

const shuffled = <T>(items: T[]): T[] =>
  items
    .map((v, i) => ({ v, k: (i * 7919) % 101 }))
    .sort((a, b) => a.k - b.k)
    .map((x) => x.v);

let dynalite: DynaliteServer;
const TABLE = 'flowmend-contract';
const dynamoStore = (encoding: 'attributes' | 'json' = 'attributes') =>
  new DynamoRunStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: TABLE, encoding });

const sqliteDir = mkdtempSync(join(tmpdir(), 'flowmend-contract-'));
const sqliteStores: SqliteRunStore[] = [];
const sqliteStore = (threaded?: 'every write' | 'serve'): SqliteRunStore => {
  const options = threaded === undefined ? {} : { writerPort: writer?.port(), everyWriteToWriter: threaded === 'every write' };
  const store = SqliteRunStore.open(sqliteDir, options);
  sqliteStores.push(store);
  return store;
};
// serve's writer thread (the build's dist/sqlite-writer.cjs): the same contract with the writes committed there.
let writer: SqliteWriterThread | undefined;

beforeAll(async () => {
  const file = findSqliteWriterFile();
  if (!file) throw new Error('dist/sqlite-writer.cjs is missing: run node scripts/build.mjs first');
  writer = await startSqliteWriter(file, sqliteDir, (message) => {
    throw new Error(message);
  });
  dynalite = await startDynalite();
  await ensureTable(createLocalDynamoClient(dynalite.endpoint), TABLE);
});
afterAll(async () => {
  await dynalite?.close();
  for (const store of sqliteStores) store.close();
  await writer?.close();
  rmSync(sqliteDir, { recursive: true, force: true });
});

describe.each([
  { name: 'MemoryRunStore', create: (): RunStore => new MemoryRunStore() },
  { name: 'DynamoRunStore', create: (): RunStore => dynamoStore() },
  { name: 'DynamoRunStore, json encoding', create: (): RunStore => dynamoStore('json') },
  { name: 'SqliteRunStore', create: (): RunStore => sqliteStore() },
  { name: 'SqliteRunStore, writes through the writer thread', create: (): RunStore => sqliteStore('every write') },
  { name: "SqliteRunStore, serve's routing (a write made alone on its own connection)", create: (): RunStore => sqliteStore('serve') },
])('RunStore contract: $name', ({ create }) => {
  let store: RunStore;
  beforeAll(() => {
    store = create();
  });

  it('creates a run and reads it back; an unknown run is undefined', async () => {
    const run = makeRun();
    await store.putRun(run, { notExists: true });
    expect(await store.getRun(run.runId)).toEqual(run);
    expect(await store.getRun('no_such_run')).toBeUndefined();
  });

  it('rejects a second create with StaleRunError and keeps the first', async () => {
    const run = makeRun();
    await store.putRun(run, { notExists: true });
    await expect(store.putRun({ ...run, status: 'failed' }, { notExists: true })).rejects.toBeInstanceOf(StaleRunError);
    expect((await store.getRun(run.runId))?.status).toBe('running');
  });

  it('writes under the right owner and seq, and rejects a wrong owner or seq', async () => {
    const run = makeRun();
    await store.putRun(run, { notExists: true });
    await expect(store.putRun({ ...run, seq: 1 }, { ownerId: 'owner-b' })).rejects.toBeInstanceOf(StaleRunError);
    await expect(store.putRun({ ...run, seq: 1 }, { seq: 5 })).rejects.toBeInstanceOf(StaleRunError);
    await expect(store.putRun({ ...run, seq: 1 }, { ownerId: 'owner-a', seq: 5 })).rejects.toBeInstanceOf(StaleRunError);
    await store.putRun({ ...run, seq: 1 }, { ownerId: 'owner-a', seq: 0 });
    await store.putRun({ ...run, seq: 2 }, { seq: 1 });
    expect((await store.getRun(run.runId))?.seq).toBe(2);
  });

  it('writes only while eventSeq is the one read: a commit that left seq alone still moves the run on', async () => {
    const run = makeRun();
    await expect(store.putRun(run, { eventSeq: 0 })).rejects.toBeInstanceOf(StaleRunError);
    await store.putRun(run, { notExists: true });
    await store.putRun({ ...run, eventSeq: 1, status: 'failed' }, { ownerId: 'owner-a', eventSeq: 0 });
    await expect(store.putRun({ ...run, owner: { id: 'owner-b', since: NOW } }, { ownerId: 'owner-a', seq: 0, eventSeq: 0 })).rejects.toBeInstanceOf(
      StaleRunError,
    );
    expect(await store.getRun(run.runId)).toMatchObject({ status: 'failed', eventSeq: 1, owner: { id: 'owner-a' } });
    await store.putRun({ ...run, eventSeq: 2 }, { eventSeq: 1 });
    expect((await store.getRun(run.runId))?.eventSeq).toBe(2);
  });

  it('rejects an owner or seq condition on a run that does not exist', async () => {
    const run = makeRun();
    await expect(store.putRun(run, { ownerId: 'owner-a' })).rejects.toBeInstanceOf(StaleRunError);
    await expect(store.putRun(run, { seq: 0 })).rejects.toBeInstanceOf(StaleRunError);
    expect(await store.getRun(run.runId)).toBeUndefined();
  });

  it('keeps stored state apart from the objects passed in and handed out', async () => {
    const run = makeRun({ params: { nested: { list: [1, 2] } } });
    await store.putRun(run, { notExists: true });
    (run.params.nested as { list: number[] }).list.push(3);
    const read = await store.getRun(run.runId);
    // biome-ignore lint/correctness/noUnsafeOptionalChaining: a run that was not found fails the test here
    (read?.params.nested as { list: number[] }).list.push(4);
    expect((await store.getRun(run.runId))?.params).toEqual({ nested: { list: [1, 2] } });
  });

  it('round-trips values exactly: nested objects, empty strings, unicode, numbers', async () => {
    const params = {
      empty: '',
      spaces: '  ',
      unicode: 'héllo wörld ✓ 日本語 🚀 \u0000x',
      newline: 'a\nb\t"c"',
      numbers: [0, -1, 1.5, -0.25, 1e-7, 123456789.123, Number.MAX_SAFE_INTEGER, 2 ** 60, -(2 ** 60), 1e21],
      nested: { a: { b: { c: [{ d: null, e: true, f: false }, [], {}] } }, 'key with spaces': 'v', ключ: 'значение' },
      emptyList: [],
      emptyObject: {},
      nulls: [null, null],
    };
    const run = makeRun({ params, outputs: { json: '{"a":1}' }, lastErrorSignature: '' });
    await store.putRun(run, { notExists: true });
    expect(await store.getRun(run.runId)).toEqual(run);
    const step = aRecord(run.runId, 1, { status: 'completed', outputs: params, action: 'default' });
    await store.putRecord(step);
    expect(await store.listRecords(run.runId)).toEqual([step]);
  });

  it('creates a step once, and moves it on only from the expected status', async () => {
    const runId = newRunId();
    const step = aRecord(runId, 1);
    await store.putRecord(step, null);
    await expect(store.putRecord(step, null)).rejects.toBeInstanceOf(StaleRunError);
    const done = { ...step, status: 'completed' as const, action: 'default', outputs: { stdout: 'ok' }, finishedAt: NOW + 5 };
    await store.putRecord(done, 'running');
    await expect(store.putRecord({ ...done, status: 'failed' }, 'running')).rejects.toBeInstanceOf(StaleRunError);
    await expect(store.putRecord(aRecord(runId, 2), 'running')).rejects.toBeInstanceOf(StaleRunError);
    expect(await store.getRecords(runId, [1, 2])).toEqual([done]);
    await store.putRecord({ ...done, action: 'again' });
    expect((await store.getRecords(runId, [1]))[0]?.action).toBe('again');
  });

  it('writes a batch of steps, more than one request holds, and writing them again changes nothing', async () => {
    const runId = newRunId();
    const batch = Array.from({ length: 40 }, (_, i) => aRecord(runId, i + 1, { status: 'completed', action: 'default', outputs: { n: i } }));
    await store.putRecords(batch);
    await store.putRecords(batch.slice(0, 5));
    await store.putRecords([]);
    expect(await store.listRecords(runId)).toEqual(batch);
  });

  it('lists only the steps after a seq when asked (what a follower has not seen), none past the last', async () => {
    const runId = newRunId();
    const batch = Array.from({ length: 12 }, (_, i) => aRecord(runId, i + 1, { status: 'completed', action: 'default' }));
    await store.putRecords(batch);
    await store.putRecord(aRecord(newRunId(), 11));
    expect((await store.listRecords(runId, 9)).map((s) => s.seq)).toEqual([10, 11, 12]);
    expect(await store.listRecords(runId, 0)).toEqual(batch);
    expect(await store.listRecords(runId, 12)).toEqual([]);
  });

  it('gets and lists more than a page of steps, in seq order', async () => {
    const runId = newRunId();
    const padding = 'x'.repeat(5000); // 250 steps of ~5 KB make more than one 1 MB Query page
    const seqs = Array.from({ length: 250 }, (_, i) => i + 1);
    for (const seq of shuffled(seqs)) await store.putRecord(aRecord(runId, seq, { outputs: { stdout: padding } }));
    await store.putRecord(aRecord(newRunId(), 1));

    const listed = await store.listRecords(runId);
    expect(listed.map((s) => s.seq)).toEqual(seqs);
    expect(listed[249]?.outputs).toEqual({ stdout: padding });

    const wanted = [...seqs.filter((s) => s % 2 === 0), 999, 2, 4];
    const got = await store.getRecords(runId, wanted);
    expect(got.map((s) => s.seq).sort((a, b) => a - b)).toEqual(seqs.filter((s) => s % 2 === 0));
    expect(await store.getRecords(runId, [])).toEqual([]);
  });

  it('appends events and lists them in key order, after a key when asked', async () => {
    const runId = newRunId();
    const events = Array.from({ length: 60 }, (_, i) => makeEvent(runId, i + 1));
    await store.appendEvents(shuffled(events));
    await store.appendEvents([makeEvent(newRunId(), 1)]);
    await store.putRecord(aRecord(runId, 1));
    await store.putRun(makeRun({ runId }), { notExists: true });

    expect(await store.listEvents(runId)).toEqual(events);
    expect(await store.listEvents(runId, events[39]?.key)).toEqual(events.slice(40));
    expect(await store.listEvents(runId, `${events[9]?.key}5`)).toEqual(events.slice(10));
    expect(await store.listEvents(runId, events[59]?.key)).toEqual([]);
    expect(await store.listEvents(newRunId())).toEqual([]);
  });

  it('overwrites an event written again with the same key', async () => {
    const runId = newRunId();
    const event = makeEvent(runId, 1);
    await store.appendEvents([event, { ...event, message: 'first try' }]);
    await store.appendEvents([event]);
    expect(await store.listEvents(runId)).toEqual([event]);
  });

  it('lists recent runs newest first, across days, by workflow when asked', async () => {
    const workflow = `wf_${newRunId()}`;
    const other = `wf_${newRunId()}`;
    const runs = [0, 1, 2, 26, 50, 80].map((hoursAgo) => makeRun({ workflowName: workflow, createdAt: NOW - hoursAgo * HOUR + 1000, updatedAt: NOW }));
    const old = makeRun({ workflowName: workflow, createdAt: NOW - 40 * DAY });
    const others = [0.5, 30].map((hoursAgo) => makeRun({ workflowName: other, createdAt: NOW - hoursAgo * HOUR + 1000 }));
    for (const run of shuffled([...runs, old, ...others])) await store.putRun(run, { notExists: true });

    const mine = await store.listRuns({ limit: 100, workflowName: workflow });
    expect(mine.map((r) => r.runId)).toEqual([...runs, old].map((r) => r.runId));
    expect((await store.listRuns({ limit: 2, workflowName: workflow })).map((r) => r.runId)).toEqual(runs.slice(0, 2).map((r) => r.runId));
    expect(await store.listRuns({ limit: 5, workflowName: 'never-ran' })).toEqual([]);

    const recent = (await store.listRuns({ limit: 1000 })).filter((r) => [workflow, other].includes(r.workflowName));
    const expected = [...runs, ...others].sort((a, b) => b.createdAt - a.createdAt).map((r) => r.runId);
    expect(recent.map((r) => r.runId)).toEqual(expected);
    expect(recent[0]).toEqual(runs[0]);
    const firstThree = await store.listRuns({ limit: 3 });
    expect(firstThree).toHaveLength(3);
    expect(firstThree.map((r) => r.createdAt)).toEqual([...firstThree.map((r) => r.createdAt)].sort((a, b) => b - a));
  });

  it('lists waiting runs soonest due first (an answered wait at its answer, one without a deadline last), only the due ones with dueBy', async () => {
    const since = NOW - HOUR;
    const waiting = (wait: NonNullable<RunItem['wait']>): RunItem => makeRun({ status: 'waiting', wait });
    const later = waiting({ kind: 'time', id: 'w1', since, nodeId: 'pause', until: NOW + 2 * DAY });
    const soon = waiting({ kind: 'event', id: 'w2', since, nodeId: 'hook', tokenHash: 'a'.repeat(64), until: NOW + HOUR });
    const answered = waiting({
      kind: 'approval',
      id: 'w3',
      since,
      nodeId: 'send',
      nodeType: 'shell',
      preview: { command: 'echo hi' },
      answer: { outcome: 'approved', at: NOW - 1000 },
    });
    const open = waiting({ kind: 'approval', id: 'w4', since, nodeId: 'send', nodeType: 'shell', preview: {} });
    const running = makeRun({ status: 'running' });
    for (const run of shuffled([later, soon, answered, open, running])) await store.putRun(run, { notExists: true });
    const ours = new Set([later, soon, answered, open, running].map((r) => r.runId));
    const listed = (await store.listWaiting({ limit: 1000 })).filter((r) => ours.has(r.runId));
    expect(listed.map((r) => r.runId)).toEqual([answered, soon, later, open].map((r) => r.runId));
    expect(listed[0]).toEqual(answered);
    const due = (await store.listWaiting({ limit: 1000, dueBy: NOW + 2 * HOUR })).filter((r) => ours.has(r.runId));
    expect(due.map((r) => r.runId)).toEqual([answered, soon].map((r) => r.runId));
    // Once it runs again, a run is no longer listed.
    await store.putRun({ ...answered, status: 'running' }, { ownerId: 'owner-a' });
    expect((await store.listWaiting({ limit: 1000, dueBy: NOW })).some((r) => r.runId === answered.runId)).toBe(false);
  });

  it('writes an IR version once; the same content again is a no-op, other content is stale', async () => {
    const runId = newRunId();
    const original = makeIr(runId, 0);
    const repaired = makeIr(runId, 1, 'echo fixed');
    await store.putIrVersion(original);
    await store.putIrVersion(repaired);
    await store.putIrVersion(structuredClone(original));
    await expect(store.putIrVersion(makeIr(runId, 1, 'echo other'))).rejects.toBeInstanceOf(StaleRunError);
    expect(await store.getIrVersion(runId, 0)).toEqual(original);
    expect(await store.getIrVersion(runId, 1)).toEqual(repaired);
    expect(await store.getIrVersion(runId, 2)).toBeUndefined();
  });

  it('commits a step: events, records and the run item; a failed condition keeps the run item as it was', async () => {
    const run = makeRun();
    await store.putRun(run, { notExists: true });
    const steps = [1, 2].map((seq) => aRecord(run.runId, seq, { status: 'completed', action: 'default' }));
    const events = [makeEvent(run.runId, 1), makeEvent(run.runId, 2)];
    await commitAdvance(store, { run: { ...run, seq: 2 }, condition: { ownerId: 'owner-a' }, records: steps, events });
    expect((await store.getRun(run.runId))?.seq).toBe(2);
    expect(await store.listRecords(run.runId)).toEqual(steps);
    expect(await store.listEvents(run.runId)).toEqual(events);

    const late = { run: { ...run, seq: 3 }, condition: { ownerId: 'owner-b' }, records: [], events: [] };
    await expect(commitAdvance(store, late)).rejects.toBeInstanceOf(StaleRunError);
    expect((await store.getRun(run.runId))?.seq).toBe(2);
  });

  it('commits steps of several runs at once (one transaction on SQLite): a failed condition undoes only its own step', async () => {
    const runs = [makeRun(), makeRun(), makeRun()];
    for (const run of runs) await store.putRun(run, { notExists: true });
    const stepOf = (run: RunItem, owner: string) => ({
      run: { ...run, seq: 1 },
      condition: { ownerId: owner },
      records: [aRecord(run.runId, 1, { status: 'completed', action: 'default' })],
      events: [makeEvent(run.runId, 1)],
    });
    const [a, b, c] = runs as [RunItem, RunItem, RunItem];
    const results = await Promise.allSettled([
      commitAdvance(store, stepOf(a, 'owner-a')),
      commitAdvance(store, stepOf(b, 'owner-b')),
      commitAdvance(store, stepOf(c, 'owner-a')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(StaleRunError);
    for (const run of [a, c]) {
      expect((await store.getRun(run.runId))?.seq).toBe(1);
      expect(await store.listRecords(run.runId)).toHaveLength(1);
      expect(await store.listEvents(run.runId)).toHaveLength(1);
    }
    expect((await store.getRun(b.runId))?.seq).toBe(0);
    // A store without transactions writes events and records before the guarded run item (advance-commit.ts).
    if (store.commitAdvance) {
      expect(await store.listRecords(b.runId)).toEqual([]);
      expect(await store.listEvents(b.runId)).toEqual([]);
    }
  });
});

describe('DynamoRunStore', () => {
  it('refuses an item over 400 KB with an error naming the run, the step and its size', async () => {
    const step = aRecord(newRunId(), 7, { nodeId: 'fetch', outputs: { response: 'é'.repeat(210_000) } });
    const error = await dynamoStore()
      .putRecord(step)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(new RegExp(`run ${step.runId}: step 7 \\(node fetch\\) is 410\\.\\d KB, over`));
  });

  it('reports a corrupt item as a StoreError naming the field', async () => {
    const runId = newRunId();
    const doc = createDocumentClient(createLocalDynamoClient(dynalite.endpoint));
    await doc.send('PutItem', { TableName: TABLE, Item: { pk: runPk(runId), sk: RUN_SK, ...makeRun({ runId }), status: 'bogus' } });
    await expect(dynamoStore().getRun(runId)).rejects.toThrow(/corrupt run item .*status/);
    await doc.send('PutItem', { TableName: TABLE, Item: { pk: runPk(runId), sk: stepSk(1), runId } });
    await expect(dynamoStore().listRecords(runId)).rejects.toBeInstanceOf(StoreError);
  });

  it('stamps items with expiresAt when a retention is set, and leaves it out of what it returns', async () => {
    const doc = createDocumentClient(createLocalDynamoClient(dynalite.endpoint));
    const now = Date.UTC(2030, 0, 1);
    const store = new DynamoRunStore({ client: doc, tableName: TABLE, retentionDays: 7, now: () => now });
    const run = makeRun();
    await store.putRun(run, { notExists: true });
    const raw = await doc.send('GetItem', { TableName: TABLE, Key: { pk: runPk(run.runId), sk: RUN_SK } });
    expect(raw.Item?.expiresAt).toBe(now / 1000 + 7 * 86_400);
    expect(await store.getRun(run.runId)).toEqual(run);
  });

  it('turns DynamoDB failures into StoreError with the cause kept', async () => {
    const store = new DynamoRunStore({ client: createDocumentClient(createLocalDynamoClient(dynalite.endpoint)), tableName: 'no-such-table' });
    const error = await store.getRun('abcdef').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).cause).toMatchObject({ name: 'ResourceNotFoundException' });
  });

  it('treats a conditional write repeated after a lost response as done, not stale', async () => {
    // Sends every request twice and answers with the second response, as a retry after a dropped reply would.
    const proxy = await startDynamoProxy(dynalite.endpoint, async (_request, forward) => {
      await forward();
      return forward();
    });
    try {
      const store = new DynamoRunStore({ client: createDocumentClient(createLocalDynamoClient(proxy.endpoint)), tableName: TABLE });
      const run = makeRun();
      await store.putRun(run, { notExists: true });
      await store.putRun({ ...run, seq: 1 }, { seq: 0, ownerId: 'owner-a' });
      await store.putRecord(aRecord(run.runId, 1), null);
      await store.putRecord(aRecord(run.runId, 1, { status: 'completed' }), 'running');
      expect((await store.getRun(run.runId))?.seq).toBe(1);
      await expect(store.putRun({ ...run, seq: 2 }, { seq: 0 })).rejects.toBeInstanceOf(StaleRunError);
    } finally {
      await proxy.close();
    }
  });
});
