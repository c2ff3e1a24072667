// `flowmend serve` on every core (issue 30): runs driven by worker threads, many at once, record exactly what
// one run alone records; a worker that dies mid-step leaves its runs resumable (the pool drives them on).
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../../functions/adapters/sqlite-run-store.ts';
import { claimRun, createRun, type RunItem, WorkflowSchema } from '../../functions/core/index.ts';
import { findServeWorkerFile, WorkerPoolLauncher } from '../../functions/hosts/local/worker-pool-launcher.ts';
import { killStrayChildren, makeTempDir, until, waitForFile } from '../support/cli-process.ts';
import { request, startServe, waitForRun } from '../support/serve-process.ts';

const root = makeTempDir('serve-workers');
afterAll(() => {
  killStrayChildren();
  rmSync(root, { recursive: true, force: true });
});

/** Shell, transform and an error edge: what a run records depends on its inputs only. */
const workflow = {
  inputs: { who: { type: 'string', required: true } },
  nodes: [
    { id: 'greet', type: 'shell', params: { command: 'echo "hello ${who}"' } },
    { id: 'shape', type: 'transform', params: { expression: '{"text": $trim($), "n": $length($trim($))}', input: '${greet.stdout}' } },
    { id: 'check', type: 'shell', params: { command: 'test "${shape.result.n}" -gt 100' } },
    { id: 'after', type: 'transform', params: { expression: '$ & "!"', input: '${shape.result.text}' } },
  ],
  edges: [
    { from: 'greet', to: 'shape' },
    { from: 'shape', to: 'check' },
    { from: 'check', to: 'after', action: 'error' },
  ],
  outputs: { said: { source: '${after.result}' } },
};

/** What a run recorded, without what differs between any two runs (ids, clocks, owners, durations). */
const VARYING = /(^|_)(at|id|ms)$|At$|Id$|Ms$|^(rev|owner|trace|since|pid|duration|started|updated|created|timings|run_id|runId)$/;
const normalise = (value: unknown, runId: string): unknown => {
  if (typeof value === 'string') return value.replaceAll(runId, '<run>');
  if (Array.isArray(value)) return value.map((v) => normalise(v, runId));
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !VARYING.test(key))
        .map(([key, v]) => [key, normalise(v, runId)]),
    );
  }
  return value;
};

const recorded = async (store: SqliteRunStore, runId: string, report: unknown) =>
  normalise(
    {
      report,
      records: await store.listRecords(runId),
      events: await store.listEvents(runId),
      result: (await store.getRun(runId))?.outputs,
    },
    runId,
  );

describe('flowmend serve --workers 2', () => {
  it('records for each of 24 runs started at once exactly what one run alone records (two inputs, interleaved)', async () => {
    const stateDir = join(root, 'many');
    const serve = await startServe(stateDir, 30_000, ['--workers', '2']);
    try {
      expect(serve.log()).toContain('runs are driven in 2 worker threads');
      const start = async (who: string) => {
        const started = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow, name: 'many', params: { who }, repair: false } });
        expect(started.status).toBe(202);
        return started.body.run_id;
      };
      const whos = ['ada', 'bob'];
      const alone: string[] = [];
      for (const who of whos) {
        alone.push(await start(who));
        expect(await waitForRun(serve.url, alone.at(-1) as string)).toMatchObject({ success: true, result: { said: `hello ${who}!` } });
      }
      const many = await Promise.all(Array.from({ length: 24 }, (_, i) => start(whos[i % 2] as string)));
      const reports = await Promise.all(many.map((id) => waitForRun(serve.url, id)));
      const store = SqliteRunStore.open(stateDir);
      try {
        const expected = await Promise.all(alone.map(async (id) => recorded(store, id, (await request(serve.url, 'GET', `/runs/${id}`)).body)));
        expect(JSON.stringify(expected[1])).toContain('hello bob');
        for (const [i, runId] of many.entries()) expect(await recorded(store, runId, reports[i])).toEqual(expected[i % 2]);
      } finally {
        store.close();
      }
    } finally {
      await serve.stop();
    }
  });
});

/** A pool of `workers` serve workers (at most 4 runs each) over a state dir of its own, logging to `log`. */
const openPool = (name: string, workers: number, log: (message: string, fields?: Record<string, unknown>) => void) => {
  const file = findServeWorkerFile();
  if (!file) throw new Error('dist/serve-worker.cjs is missing: run node scripts/build.mjs first');
  const dir = join(root, name);
  const stateDir = join(dir, 'state');
  const store = SqliteRunStore.open(stateDir);
  const pool = new WorkerPoolLauncher({ stateDir, file, workers, runsPerWorker: 4, store, onWritten: () => {}, observe: () => {}, log });
  return { dir, store, pool };
};

describe('WorkerPoolLauncher', () => {
  it('drives on, from its last durable step, a run whose worker died in the middle of a node', async () => {
    const logs: string[] = [];
    const { dir, store, pool } = openPool('kill', 1, (m) => logs.push(m));
    try {
      const side = (name: string) => join(dir, name);
      const killable = WorkflowSchema.parse({
        nodes: [
          { id: 'first', type: 'shell', params: { command: `echo once >> ${side('first.txt')}` } },
          {
            id: 'slow',
            type: 'shell',
            params: { command: `echo try >> ${side('slow.txt')}; while [ ! -f ${side('gate')} ]; do sleep 0.02; done` },
          },
          { id: 'last', type: 'shell', params: { command: `echo once >> ${side('last.txt')}` } },
        ],
        edges: [
          { from: 'first', to: 'slow' },
          { from: 'slow', to: 'last' },
        ],
      });
      const now = Date.now();
      const owner = pool.newOwner('run-kill', now);
      await createRun(store, {
        runId: 'run-kill',
        workflow: killable,
        workflowName: 'kill',
        params: {},
        owner,
        repairEnabled: false,
        maxRepairs: 0,
        now,
        workspace: dir,
      });
      await pool.launch({ runId: 'run-kill', owner, mode: 'express' });
      await waitForFile(side('slow.txt'), 'the slow node to start');
      await pool.terminateWorker(0);
      writeFileSync(side('gate'), '');
      await until('run-kill to stop running', async () => (await store.getRun('run-kill'))?.status !== 'running');
      const run = (await store.getRun('run-kill')) as RunItem;
      expect(run.status).toBe('succeeded');
      expect(run.owner?.id).not.toBe(owner.id);
      expect(logs.join('\n')).toMatch(/serve worker 0 stopped .* 1 of its runs go on in a new one/);
      // The node that completed ran once; the one the worker died in ran again; the rest once.
      expect(readFileSync(side('first.txt'), 'utf8')).toBe('once\n');
      expect(readFileSync(side('slow.txt'), 'utf8')).toBe('try\ntry\n');
      expect(readFileSync(side('last.txt'), 'utf8')).toBe('once\n');
      expect((await store.listEvents('run-kill')).map((e) => e.type)).toContain('run_resumed');
    } finally {
      await pool.close();
      store.close();
    }
  });
});

describe('WorkerPoolLauncher affinity', () => {
  it('drives a resumed run in the worker that drove it last, where its items are still cached, though another is as free', async () => {
    const ends: { message: string; worker?: unknown }[] = [];
    const { dir, store, pool } = openPool('affinity', 2, (message, fields) => ends.push({ message, worker: fields?.worker }));
    const gate = (name: string) => join(dir, name);
    const start = async (runId: string, command: string) => {
      const now = Date.now();
      const owner = pool.newOwner(runId, now);
      const workflow = WorkflowSchema.parse({ nodes: [{ id: 'only', type: 'shell', params: { command } }], edges: [] });
      await createRun(store, { runId, workflow, workflowName: runId, params: {}, owner, repairEnabled: false, maxRepairs: 0, now, workspace: dir });
      await pool.launch({ runId, owner, mode: 'express' });
    };
    const endOf = (runId: string, status: string) => ends.filter((e) => e.message === `run ${runId} ${status}`);
    try {
      // `busy` takes worker 0 while `again` fails on worker 1; once both are idle, worker 0 is the least busy (the first of equals).
      await start('run-busy', `while [ ! -f ${gate('busy')} ]; do sleep 0.02; done`);
      await start('run-again', `test -f ${gate('again')}`);
      await until('run-again to fail', () => endOf('run-again', 'failed').length === 1);
      writeFileSync(gate('busy'), '');
      await until('run-busy to succeed', () => endOf('run-busy', 'succeeded').length === 1);
      expect(endOf('run-busy', 'succeeded')[0]?.worker).toBe(0);
      expect(endOf('run-again', 'failed')[0]?.worker).toBe(1);
      writeFileSync(gate('again'), '');
      const now = Date.now();
      const owner = pool.newOwner('run-again', now);
      await claimRun(store, 'run-again', { owner, now, isAlive: async () => false });
      await pool.launch({ runId: 'run-again', owner, mode: 'express' });
      await until('run-again to succeed', () => endOf('run-again', 'succeeded').length === 1);
      expect(endOf('run-again', 'succeeded')[0]?.worker).toBe(1);
    } finally {
      await pool.close();
      store.close();
    }
  });
});
