import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  daemonInfoPath,
  isProcessAlive,
  type LocalStore,
  openLocalStore,
  readDaemonInfo,
  stopLocalDaemon,
} from '../../functions/adapters/local-dynamo.ts';
import type { RunItem, NodeRecord } from '../../functions/core/run-model.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const WRITER = fileURLToPath(new URL('./local-store-writer.ts', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'flowmend-local-dynamo-'));
const stateDirs: string[] = [];
const opened: LocalStore[] = [];
let counter = 0;

const newStateDir = () => {
  const dir = join(root, `state-${++counter}`);
  stateDirs.push(dir);
  return dir;
};
const open = async (dir: string) => {
  const local = await openLocalStore(dir);
  opened.push(local);
  return local;
};

const makeRun = (runId: string): RunItem => ({
  runId, workflowName: 'local', status: 'running', irVersion: 0, params: { nested: { text: 'ünïcode ✓', n: 1.25 } },
  createdAt: Date.now(), updatedAt: Date.now(), seq: 0, eventSeq: 0, repairedNodes: [], pendingRecords: [], flushedThrough: 0, needsWalk: false, latest: {},
  visits: {}, repairEnabled: true, maxRepairs: 3, repairAttempts: 0, warnings: [], mode: 'express',
  metrics: {
    nodesExecuted: 0, nodesCached: 0, llmInputTokens: 0, llmOutputTokens: 0, llmCostUsd: 0,
    repairInputTokens: 0, repairOutputTokens: 0, repairCostUsd: 0,
  },
});
const aRecord = (runId: string, seq: number): NodeRecord => ({
  runId, seq, nodeId: `n${seq}`, nodeType: 'shell', visit: 1, status: 'completed', cacheKey: `k${seq}`,
  sideEffects: true, irVersion: 0, startedAt: Date.now(), outputs: { stdout: `out ${seq}` }, action: 'default',
});

/** Pids of daemon processes serving a state dir under `dir` (Linux /proc). */
const daemonsUnder = (dir: string): number[] =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmdline.includes('dynalite-daemon') && cmdline.includes(dir);
      } catch {
        return false;
      }
    })
    .map(Number);

const waitFor = async (condition: () => boolean, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

const runWriter = (stateDir: string, runId: string) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', WRITER, stateDir, runId], { cwd: REPO, env: process.env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });

beforeAll(() => {
  process.env.FLOWMEND_DAEMON_IDLE_S = '2';
});

afterAll(async () => {
  await Promise.all(opened.map((local) => local.close()));
  await Promise.all(stateDirs.map((dir) => stopLocalDaemon(dir)));
  for (const pid of daemonsUnder(root)) process.kill(pid, 'SIGKILL');
});

describe('openLocalStore', () => {
  it('keeps data on disk across a daemon stop and a new daemon', async () => {
    const dir = newStateDir();
    const first = await open(dir);
    const run = makeRun('persisted_run');
    const step = aRecord(run.runId, 1);
    await first.store.putRun(run, { notExists: true });
    await first.store.putRecord(step, null);
    const firstPid = readDaemonInfo(dir)?.pid;
    await first.close();
    await stopLocalDaemon(dir);
    expect(existsSync(daemonInfoPath(dir))).toBe(false);

    const second = await open(dir);
    expect(readDaemonInfo(dir)?.pid).not.toBe(firstPid);
    expect(await second.store.getRun(run.runId)).toEqual(run);
    expect(await second.store.listRecords(run.runId)).toEqual([step]);
  });

  it('lets two processes write to one state dir at once, through one daemon', async () => {
    const dir = newStateDir();
    const results = await Promise.all([runWriter(dir, 'writer_one'), runWriter(dir, 'writer_two')]);
    for (const result of results) expect(result, result.stderr).toMatchObject({ code: 0 });
    const endpoints = results.map((r) => (JSON.parse(r.stdout) as { endpoint: string }).endpoint);
    expect(endpoints[0]).toBe(endpoints[1]);

    const local = await open(dir);
    expect(local.endpoint).toBe(endpoints[0]);
    for (const runId of ['writer_one', 'writer_two']) {
      expect((await local.store.getRun(runId))?.workflowName).toBe('writer');
      expect((await local.store.listRecords(runId)).map((s) => s.seq)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
      expect(await local.store.listEvents(runId)).toHaveLength(30);
    }
  });

  it('survives its daemon being killed between two calls', async () => {
    const dir = newStateDir();
    const local = await open(dir);
    const run = makeRun('killed_daemon_run');
    await local.store.putRun(run, { notExists: true });
    const killed = readDaemonInfo(dir)?.pid as number;
    const before = local.endpoint;
    process.kill(killed, 'SIGKILL');
    await waitFor(() => !isProcessAlive(killed), 'the killed daemon to go');

    expect(await local.store.getRun(run.runId)).toEqual(run);
    await local.store.putRun({ ...run, seq: 1 }, { seq: 0 });
    expect((await local.store.getRun(run.runId))?.seq).toBe(1);
    expect(local.endpoint).not.toBe(before);
    expect(readDaemonInfo(dir)?.pid).not.toBe(killed);
  });

  it('starts a new daemon when the old one exited for being idle', async () => {
    const dir = newStateDir();
    const local = await open(dir);
    const run = makeRun('idle_daemon_run');
    await local.store.putRun(run, { notExists: true });
    const idle = readDaemonInfo(dir)?.pid as number;
    await waitFor(() => !isProcessAlive(idle), 'the idle daemon to exit');
    expect(existsSync(daemonInfoPath(dir))).toBe(false);
    expect(await local.store.getRun(run.runId)).toEqual(run);
  });
});

describe('stopLocalDaemon', () => {
  it('leaves no daemon process behind', async () => {
    const dir = newStateDir();
    const local = await open(dir);
    await local.store.getRun('nobody_here');
    const pid = readDaemonInfo(dir)?.pid as number;
    expect(isProcessAlive(pid)).toBe(true);
    await stopLocalDaemon(dir);
    expect(isProcessAlive(pid)).toBe(false);
    expect(existsSync(daemonInfoPath(dir))).toBe(false);
    expect(daemonsUnder(dir)).toEqual([]);
    await stopLocalDaemon(dir);
  });
});
