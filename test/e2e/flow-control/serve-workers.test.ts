// Flow control when `flowmend serve --workers N` drives runs in worker threads: the slots are the state dir's
// (shared by every worker), and a slot a run frees in one worker starts the run it goes to, wherever it is driven.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killStrayChildren, makeTempDir } from '../../support/cli-process.ts';
import { maxOverlap } from '../../support/overlap.ts';
import { request, startServe, waitForRun } from '../../support/serve-process.ts';
import { readMarks } from './flow-host.ts';

const root = makeTempDir('flow-serve-workers');
afterAll(() => {
  killStrayChildren();
  rmSync(root, { recursive: true, force: true });
});

describe('flowmend serve --workers 2 with a concurrency limit', () => {
  it('3 runs started at once under a limit of 1: never two holders at once, and all complete without a scheduler tick', async () => {
    const log = join(root, 'marks.log');
    const workflow = {
      inputs: { n: { type: 'string', required: true } },
      concurrency: { key: 'only-one', limit: 1 },
      nodes: [
        {
          id: 'hold',
          type: 'shell',
          params: { command: `echo "$(date +%s%N) start \${n}" >> ${log}; sleep 1; echo "$(date +%s%N) end \${n}" >> ${log}` },
        },
      ],
    };
    // A 1 s node: runs the two workers took up together would overlap for sure. --manual-clock: the scheduler ticks only when told, so only a wake-up from the worker that freed a slot starts a waiter.
    const serve = await startServe(join(root, 'state'), 30_000, ['--workers', '2']);
    try {
      const started = await Promise.all(
        ['r0', 'r1', 'r2'].map((n) =>
          request<{ run_id: string }>(serve.url, 'POST', '/runs', { body: { workflow, name: 'one', params: { n }, repair: false } }),
        ),
      );
      expect(started.map((s) => s.status)).toEqual([202, 202, 202]);
      const reports = await Promise.all(started.map((s) => waitForRun(serve.url, s.body.run_id, 30_000, true)));
      expect(reports.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      const spans = new Map<string, { start: number; end: number }>();
      for (const m of readMarks(log)) spans.set(m.who, { ...(spans.get(m.who) ?? { start: 0, end: 0 }), [m.what]: m.at });
      expect([...spans.keys()].sort()).toEqual(['r0', 'r1', 'r2']);
      expect(maxOverlap([...spans.values()])).toBe(1);
    } finally {
      await serve.stop();
    }
  });
});
