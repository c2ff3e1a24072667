// `flowmend serve --runs-at-once N` (the real serve, over real HTTP): serve's own thread drives at most N runs at once,
// the others wait their turn in order, `running`; a cancel takes a waiting run out of the line before it starts; a
// serve killed with a long line of waiting runs leaves all of them to the next serve.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { killStrayChildren, makeTempDir, runCli, until, waitForFile } from '../support/cli-process.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../support/serve-process.ts';

let dir: string;
beforeAll(() => {
  dir = makeTempDir('serve-runs-at-once');
});
afterAll(() => {
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

/** The runs that started, in the order they did, from the log the runs of `lane` append to. */
const started = (lane: string): string[] => {
  const log = join(dir, lane, 'started.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
};

/** Run `index` of `lane`: notes that it started, then holds its node until the lane's gate file exists. */
const gated = (lane: string, index: number): WorkflowInput => ({
  nodes: [
    {
      id: 'hold',
      type: 'shell',
      params: {
        command: `echo ${index} >> '${dir}/${lane}/started.log'; while [ ! -f '${dir}/${lane}/gate' ]; do sleep 0.02; done; echo ${index}`,
      },
    },
  ],
});

describe.each([
  { lane: 'own-thread', args: ['--runs-at-once', '2'], logged: 'runs are driven in the main thread, at most 2 at once in each' },
  { lane: 'one-worker', args: ['--workers', '1', '--runs-at-once', '2'], logged: 'runs are driven in 1 worker threads, at most 2 at once in each' },
])('flowmend serve $args', ({ lane, args, logged }) => {
  let serve: ServeProcess;
  beforeAll(async () => {
    mkdirSync(join(dir, lane));
    serve = await startServe(join(dir, lane, 'state'), 30_000, args);
  });
  afterAll(async () => {
    await serve?.stop();
  });

  it('drives two runs at once, the rest in order; a cancelled waiting run never starts', { timeout: 60_000 }, async () => {
    expect(serve.log()).toContain(logged);
    const ids: string[] = [];
    for (const index of [1, 2, 3, 4, 5]) {
      const answer = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow: gated(lane, index) } });
      expect(answer.status).toBe(202);
      ids.push(answer.body.run_id);
    }
    await until('two runs to start', () => started(lane).length >= 2, 15_000);
    // Time for a third to start, were it allowed to: none does.
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The two run at once, so either may note its start first.
    expect(started(lane).sort()).toEqual(['1', '2']);
    const third = await request<{ status: string; steps: unknown[] }>(serve.url, 'GET', `/runs/${ids[2]}`);
    expect(third.body).toMatchObject({ status: 'running', steps: [] });

    const cancelled = await request<{ status: string }>(serve.url, 'POST', `/runs/${ids[3]}/cancel`);
    expect(cancelled.status).toBe(200);
    writeFileSync(join(dir, lane, 'gate'), '');
    for (const id of [ids[0], ids[1], ids[2], ids[4]]) expect(await waitForRun(serve.url, id as string)).toMatchObject({ status: 'succeeded' });
    expect(started(lane).slice(2).sort()).toEqual(['3', '5']);
    const fourth = await request<{ status: string; steps: unknown[] }>(serve.url, 'GET', `/runs/${ids[3]}`);
    expect(fourth.body).toMatchObject({ status: 'cancelled', steps: [] });
  });
});

describe('flowmend serve --runs-at-once', () => {
  it('refuses a count below 1 with the flag named', async () => {
    const out = await runCli(['serve', '--runs-at-once', '0'], { stateDir: join(dir, 'other') });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--runs-at-once takes 1 or more');
    expect(out.stdout).toBe('');
  });
});

describe('a serve killed while runs wait their turn', () => {
  it('leaves every one of them, past the 500 most recent, to the next serve, which drives them all, oldest first', { timeout: 120_000 }, async () => {
    const stateDir = join(dir, 'state-killed');
    const gate = join(dir, 'gate-killed');
    const first = await startServe(stateDir, 30_000, ['--runs-at-once', '1']);
    const held: WorkflowInput = {
      nodes: [
        {
          id: 'hold',
          type: 'shell',
          side_effects: false,
          params: { command: `touch '${dir}/held.started'; while [ ! -f '${gate}' ]; do sleep 0.02; done` },
        },
      ],
    };
    const quick: WorkflowInput = { nodes: [{ id: 'one', type: 'transform', params: { expression: '$ + 1', input: 1 } }] };
    const ids = [(await request<{ run_id: string }>(first.url, 'POST', '/runs', { body: { workflow: held } })).body.run_id];
    await waitForFile(join(dir, 'held.started'), 'the held run to start', 15_000);
    for (let i = 0; i < 520; i += 1) {
      const answer = await request<{ run_id: string }>(first.url, 'POST', '/runs', { body: { workflow: quick } });
      expect(answer.status).toBe(202);
      ids.push(answer.body.run_id);
    }
    await first.stop('SIGKILL');

    const db = new Database(join(stateDir, 'flowmend.db'), { readonly: true, timeout: 10_000 });
    const statuses = () =>
      Object.fromEntries(
        db
          .prepare<[], { status: string; n: number }>("SELECT json_extract(body, '$.status') AS status, count(*) AS n FROM runs GROUP BY status")
          .all()
          .map((row) => [row.status, row.n]),
      );
    expect(statuses()).toEqual({ running: 521 });
    // One at a time, so that the order they finish in is the order they were taken up in.
    const second = await startServe(stateDir, 30_000, ['--runs-at-once', '1']);
    try {
      writeFileSync(gate, '');
      await until('every run to finish', () => statuses().succeeded === 521, 90_000);
      // Oldest first: the held run, then the line in the order it was posted.
      const finished = db
        .prepare<[], { run_id: string }>("SELECT run_id FROM runs ORDER BY json_extract(body, '$.updatedAt'), rowid")
        .all()
        .map((row) => row.run_id);
      expect(finished).toEqual(ids);
    } finally {
      db.close();
      await second.stop();
    }
  });
});
