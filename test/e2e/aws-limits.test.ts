import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobOffloadRunStore } from '../../functions/adapters/blob-offload-run-store.ts';
import { FileBlobStore } from '../../functions/adapters/file-blob-store.ts';
import { MAX_INLINE_OUTPUT_BYTES, MAX_INLINE_PARAMS_BYTES } from '../../functions/core/blob-store.ts';
import { TransientError } from '../../functions/core/errors.ts';
import { runIdOfExecution } from '../../functions/core/execution-names.ts';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import type { NodeRunner } from '../../functions/core/node-type.ts';
import type { RunStore } from '../../functions/core/run-store.ts';
import * as z from '../../functions/core/zod.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { LocalHost, type LocalHostOptions, StepFunctionsError } from '../../functions/hosts/local/local-host.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { startFakeAnthropic } from '../support/fake-anthropic.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'flowmend-limits-'));
  clock = 1_800_000_000_000;
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** The host's clock: runners below move it, as a slow node or repair would. */
let clock = 0;
const now = () => clock;

/** A node that takes `seconds` of the host's clock (what a slow command does to an execution's 5 minutes). */
const tickRunner: NodeRunner = {
  type: 'tick',
  paramsSchema: z.strictObject({ seconds: z.number(), note: z.optional(z.string()) }),
  outputKeys: ['done'],
  sideEffects: () => false,
  timeoutS: () => 60,
  run: async (params) => {
    clock += (params.seconds as number) * 1000;
    return { kind: 'ok', outputs: { done: true }, action: 'default', durationMs: 0 };
  },
};

/** A node that times out (60 s of the clock, a TransientError) on each try until its `passOn`-th. */
let flakyTries = 0;
const flakyRunner: NodeRunner = {
  ...tickRunner,
  type: 'flaky',
  paramsSchema: z.strictObject({ passOn: z.number() }),
  run: async (params) => {
    flakyTries += 1;
    clock += 60_000;
    if (flakyTries < (params.passOn as number)) throw new TransientError('Request timed out after 60 s');
    return { kind: 'ok', outputs: { done: true }, action: 'default', durationMs: 0 };
  },
};

const runners = [shellRunner, transformRunner, tickRunner, flakyRunner];
const withBlobs = (store: RunStore) => {
  const blobs = new FileBlobStore(dir);
  return { store: new BlobOffloadRunStore(store, blobs), blobs };
};
const host = (options: Partial<LocalHostOptions> & { store: RunStore }) => new LocalHost({ runners, retryIntervalMs: 0, now, ...options });
const run = (h: LocalHost, workflow: WorkflowInput) =>
  h.start({ workflow: WorkflowSchema.parse(workflow), workflowName: 'limits', params: {}, repairEnabled: true, maxRepairs: 3 });
const blobFiles = (kind: 'params' | 'steps'): string[] =>
  (existsSync(join(dir, 'blobs')) ? (readdirSync(join(dir, 'blobs'), { recursive: true }) as string[]) : []).filter(
    (f) => f.includes(`/${kind}/`) && f.endsWith('.json'),
  );

/** `bytes` characters of stdout, then a node that reads it all (its resolved params carry the whole output). */
const bigThenRead = (bytes: number): WorkflowInput => ({
  nodes: [
    { id: 'big', type: 'shell', params: { command: `head -c ${bytes} /dev/zero | tr '\\0' x` } },
    { id: 'read', type: 'transform', params: { expression: '$length($)', input: '${big.stdout}' } },
  ],
  edges: [{ from: 'big', to: 'read' }],
  outputs: { length: { source: '${read.result}' } },
});

describe('the 256 KiB state payload limit, enforced locally as on AWS', () => {
  it('a 300 KB output fed to the next node passes: the output and the params travel by reference', async () => {
    const report = await run(host(withBlobs(new MemoryRunStore())), bigThenRead(300_000));
    expect(report.status).toBe('succeeded');
    expect(report.result).toEqual({ length: 300_000 });
    expect(blobFiles('steps')).toHaveLength(1);
    expect(blobFiles('params')).toHaveLength(1);
  });

  it.each([
    ['just under the params budget: inline', MAX_INLINE_PARAMS_BYTES - 2_000, 0],
    ['just over the params budget: by reference', MAX_INLINE_PARAMS_BYTES + 2_000, 1],
  ])('params %s', async (_name, bytes, byReference) => {
    const report = await run(host(withBlobs(new MemoryRunStore())), bigThenRead(bytes));
    expect(report.result).toEqual({ length: bytes });
    expect(
      blobFiles('params'),
      blobFiles('params')
        .map((f) => `${f} ${statSync(join(dir, 'blobs', f)).size}`)
        .join(),
    ).toHaveLength(byReference);
  });

  it.each([
    ['just under the output budget: inline', MAX_INLINE_OUTPUT_BYTES - 4_000, 0],
    ['over the output budget, under 256 KiB: uploaded', MAX_INLINE_OUTPUT_BYTES + 20_000, 1],
  ])('an output %s', async (_name, bytes, uploaded) => {
    const report = await run(host(withBlobs(new MemoryRunStore())), bigThenRead(bytes));
    expect(report.result).toEqual({ length: bytes });
    expect(blobFiles('steps')).toHaveLength(uploaded);
  });

  it('without a blob store the run dies where AWS would kill it (States.DataLimitExceeded) and ends interrupted, then resumes', async () => {
    const store = new MemoryRunStore();
    const bare = host({ store });
    const dead = await run(bare, bigThenRead(300_000));
    expect(bare.lastDeath).toMatchObject({ error: 'States.DataLimitExceeded', state: 'RunShell' });
    expect(dead.status).toBe('interrupted');
    expect(dead.errors[0]).toMatchObject({ code: 'States.DataLimitExceeded' });

    const resumed = await host(withBlobs(store)).resume(dead.run_id);
    expect(resumed.status).toBe('succeeded');
    expect(resumed.result).toEqual({ length: 300_000 });
  });
});

describe('the Express 5-minute limit, on a clock the test drives', () => {
  const slowPair: WorkflowInput = {
    nodes: [
      // 250 s, then a node that may take 60 s: 310 s would not fit in the engine's 280 s.
      { id: 'first', type: 'tick', params: { seconds: 250 } },
      { id: 'second', type: 'tick', params: { seconds: 150 } },
    ],
    edges: [{ from: 'first', to: 'second' }],
  };

  it('the engine continues as a new execution before a node that would not fit', async () => {
    const h = host({ store: new MemoryRunStore() });
    const report = await run(h, slowPair);
    expect(h.lastDeath).toBeUndefined();
    expect(report.status).toBe('succeeded');
    expect(h.stats.executions).toBe(2);
    expect(h.lastDeath).toBeUndefined();
  });

  it("counts a node's retries: a node whose every try may time out gets a fresh execution when its retries would not fit", async () => {
    flakyTries = 0;
    // 70 s, then a 60 s node that needs all 4 tries: 60 s fits in what is left, its 4 x 60 s + waits do not.
    const retried: WorkflowInput = {
      nodes: [
        { id: 'first', type: 'tick', params: { seconds: 70 } },
        { id: 'flaky', type: 'flaky', params: { passOn: 4 } },
      ],
      edges: [{ from: 'first', to: 'flaky' }],
    };
    const h = host({ store: new MemoryRunStore() });
    const report = await run(h, retried);
    expect(h.lastDeath).toBeUndefined();
    expect(report.status).toBe('succeeded');
    expect(flakyTries).toBe(4);
    expect(h.stats.executions).toBe(2);
  });

  it('an execution that outlives 5 minutes times out at the state it was in; the run ends interrupted and resumes', async () => {
    const store = new MemoryRunStore();
    const careless = host({ store, executionLimits: { maxAdvances: 1000, maxMs: 3_600_000 } });
    const dead = await run(careless, slowPair);
    expect(careless.lastDeath).toMatchObject({ error: 'States.Timeout', state: 'RunTick' });
    expect(dead.status).toBe('interrupted');
    expect(dead.metrics.nodes_executed).toBe(1);

    const resumed = await host({ store }).resume(dead.run_id);
    expect(resumed.status).toBe('succeeded');
    // 'first' is replayed from its record; only 'second', whose result the dead execution lost, runs again.
    expect(resumed.metrics.nodes_cached).toBe(1);
  });

  /** warm (a tick of `warmS`) then a check that fails at once; the fake model's fix makes it pass; the repair takes `repairS` of the clock. */
  const repairAfter = async (warmS: number, repairS: number) => {
    const fake = await startFakeAnthropic();
    try {
      const workflow = WorkflowSchema.parse({
        nodes: [
          { id: 'warm', type: 'tick', params: { seconds: warmS } },
          // 10 s a try: with its retries, 54 s at worst, so it fits after the warm-up.
          { id: 'check', type: 'shell', params: { command: 'exit 3', timeout_s: 10 } },
        ],
        edges: [{ from: 'warm', to: 'check' }],
      });
      const fixed = structuredClone(workflow);
      (fixed.nodes[1] as { params: Record<string, unknown> }).params.command = 'echo fixed';
      fake.enqueue({ text: JSON.stringify({ workflow: fixed, reason: 'the check exits 0' }), usage: { input_tokens: 900, output_tokens: 150 } });
      const llm = envRepairHandler({ ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: fake.baseURL });
      const h = host({
        store: new MemoryRunStore(),
        makeRepairHandler: (deps) => {
          const repair = llm(deps);
          return async (event) => {
            const report = await repair(event);
            clock += repairS * 1000;
            return report;
          };
        },
      });
      const report = await h.start({ workflow, workflowName: 'limits', params: {}, repairEnabled: true, maxRepairs: 3 });
      expect(report.errors).toEqual([]);
      expect(report.status).toBe('succeeded');
      expect(report.result).toMatchObject({ stdout: 'fixed' });
      expect(h.lastDeath).toBeUndefined();
      expect(fake.pending()).toBe(0);
      return h.stats.executions;
    } finally {
      await fake.close();
    }
  };

  it('a repair that may not fit the time left (150 s of 280 gone) gets a new execution, and the repaired node runs after it there', async () => {
    // A repair may take REPAIR_MAX_S plus 7 s of service retries (157 s): after 150 s it continues first.
    expect(await repairAfter(150, 140)).toBe(2);
  });

  it('a repair with time left (20 s gone) stays in its execution, as does the repaired node', async () => {
    expect(await repairAfter(20, 100)).toBe(1);
  });
});

describe('Continue: starting the next execution through the startExecution integration', () => {
  const chain: WorkflowInput = {
    nodes: [
      { id: 'a', type: 'tick', params: { seconds: 250 } },
      { id: 'b', type: 'tick', params: { seconds: 1 } },
    ],
    edges: [{ from: 'a', to: 'b' }],
  };

  it('retries what startExecution raises (throttling) and goes on', async () => {
    let calls = 0;
    const h = host({
      store: new MemoryRunStore(),
      onStartExecution: (request) => {
        calls += 1;
        // The name the definition's States.Format gives: c-<runId>-<rev>, of characters Step Functions logs, naming its run.
        expect(request.Name).toMatch(/^c-[A-Za-z0-9_-]+-[0-9a-f]{12}$/);
        expect(runIdOfExecution(String(request.Name))).toBeDefined();
        if (calls <= 2) throw new StepFunctionsError('StepFunctions.ThrottlingException', 'Rate exceeded');
      },
    });
    const report = await run(h, chain);
    expect(report.status).toBe('succeeded');
    expect(calls).toBe(3);
    expect(h.stats.executions).toBe(2);
  });

  it('a continue that keeps failing is caught: the run is recorded interrupted (not left running) and resumes', async () => {
    const store = new MemoryRunStore();
    let calls = 0;
    const h = host({
      store,
      onStartExecution: () => {
        calls += 1;
        throw new StepFunctionsError('StepFunctions.SdkClientException', 'Unable to execute HTTP request');
      },
    });
    const dead = await run(h, chain);
    expect(calls).toBe(5);
    expect(h.stats.tasks.Interrupted).toBe(1);
    expect(dead.status).toBe('interrupted');
    expect(dead.errors[0]).toMatchObject({ code: 'StepFunctions.SdkClientException' });

    const resumed = await host({ store }).resume(dead.run_id);
    expect(resumed.status).toBe('succeeded');
    expect(resumed.metrics.nodes_cached).toBe(1);
  });
});
