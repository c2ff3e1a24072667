// `flowmend serve --runs-at-once N` (the real serve, over real HTTP): serve's own thread drives at most N runs at once,
// the others wait their turn in order, `running`; a cancel takes a waiting run out of the line before it starts.
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { killStrayChildren, makeTempDir, runCli } from '../support/cli-process.ts';
import { request, type ServeProcess, startServe, waitForRun } from '../support/serve-process.ts';

let dir: string;
let serve: ServeProcess;
beforeAll(async () => {
  dir = makeTempDir('serve-runs-at-once');
  serve = await startServe(join(dir, 'state'), 30_000, ['--runs-at-once', '2']);
});
afterAll(async () => {
  await serve?.stop();
  killStrayChildren();
  rmSync(dir, { recursive: true, force: true });
});

const started = (): string[] => {
  const log = join(dir, 'started.log');
  return existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];
};

const until = async (what: string, done: () => boolean, timeoutMs = 15_000): Promise<void> => {
  for (const deadline = Date.now() + timeoutMs; !done(); ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; started: ${started().join(',')}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** Run `index`: notes that it started, then holds its node until the gate file exists. */
const gated = (index: number): WorkflowInput => ({
  nodes: [
    {
      id: 'hold',
      type: 'shell',
      params: { command: `echo ${index} >> '${dir}/started.log'; while [ ! -f '${dir}/gate' ]; do sleep 0.02; done; echo ${index}` },
    },
  ],
});

describe('flowmend serve --runs-at-once 2', () => {
  it('drives two runs at once, the rest in order; a cancelled waiting run never starts', { timeout: 60_000 }, async () => {
    expect(serve.log()).toContain('runs are driven in the main thread, at most 2 at once in each');
    const ids: string[] = [];
    for (const index of [1, 2, 3, 4, 5]) {
      const answer = await request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow: gated(index) } });
      expect(answer.status).toBe(202);
      ids.push(answer.body.run_id);
    }
    await until('two runs to start', () => started().length >= 2);
    // Time for a third to start, were it allowed to: none does.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(started()).toEqual(['1', '2']);
    const third = await request<{ status: string; steps: unknown[] }>(serve.url, 'GET', `/runs/${ids[2]}`);
    expect(third.body).toMatchObject({ status: 'running', steps: [] });

    const cancelled = await request<{ status: string }>(serve.url, 'POST', `/runs/${ids[3]}/cancel`);
    expect(cancelled.status).toBe(200);
    writeFileSync(join(dir, 'gate'), '');
    for (const id of [ids[0], ids[1], ids[2], ids[4]]) expect(await waitForRun(serve.url, id as string)).toMatchObject({ status: 'succeeded' });
    expect(started()).toEqual(['1', '2', '3', '5']);
    const fourth = await request<{ status: string; steps: unknown[] }>(serve.url, 'GET', `/runs/${ids[3]}`);
    expect(fourth.body).toMatchObject({ status: 'cancelled', steps: [] });
  });

  it('refuses a count below 1 with the flag named', async () => {
    const out = await runCli(['serve', '--runs-at-once', '0'], { stateDir: join(dir, 'other') });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('--runs-at-once takes 1 or more');
    expect(out.stdout).toBe('');
  });
});
