// A run created in this process is driven from the item and workflow its creator wrote, not read back
// (issue 30: each read is a JSON parse and a zod parse of the run item, ~0.1 ms for a 10-node run's).
import { describe, expect, it } from 'vitest';
import { cancelRun, checkRunPatch, claimRun, createRun, MemoryRunStore, parseWorkflow, type RunStore, type Workflow } from '../../../functions/core/index.ts';
import { LocalHost } from '../../../functions/hosts/local/local-host.ts';
import { LocalRunLauncher } from '../../../functions/hosts/local/local-launcher.ts';

/** A store that counts the reads of each kind its callers make. */
const countingStore = (): { store: RunStore; reads: Record<string, number> } => {
  const reads: Record<string, number> = {};
  const store = new Proxy(new MemoryRunStore(), {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (String(name).startsWith('get') || String(name).startsWith('list')) reads[String(name)] = (reads[String(name)] ?? 0) + 1;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, reads };
};

const chain = (): Workflow => {
  const parsed = parseWorkflow({
    nodes: [
      { id: 'a', type: 'transform', params: { expression: '1' } },
      { id: 'b', type: 'transform', params: { expression: '$ + 1', input: '${a.result}' } },
    ],
    edges: [{ from: 'a', to: 'b' }],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.workflow;
};

/** A run of `chain()` created as serve's API creates one, with an owner from `launcher`. */
const created = async (host: LocalHost, launcher: LocalRunLauncher, runId: string) => {
  const owner = launcher.newOwner(runId, 0);
  const workflow = chain();
  const spec = { runId, workflow, workflowName: 'chain', params: {}, owner, repairEnabled: false, maxRepairs: 0, now: Date.now() };
  return { run: await createRun(host.store, spec), owner, workflow };
};

describe('a run created in this process', () => {
  it('started by the host: its item and workflow are not read back; only the report reads', async () => {
    const { store, reads } = countingStore();
    const report = await new LocalHost({ store }).start({ workflow: chain(), workflowName: 'chain', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(report.status).toBe('succeeded');
    // The report's own reads, and nothing else.
    expect(reads).toEqual({ getRun: 1, getIrVersion: 1, listRecords: 1, listEvents: 1 });
  });

  it("launched by serve's launcher with what its creator wrote: one read of the item, for the status it logs", async () => {
    const { store, reads } = countingStore();
    const host = new LocalHost({ store });
    const logs: string[] = [];
    const launcher = new LocalRunLauncher(host, (message) => logs.push(message));
    const { run, owner, workflow } = await created(host, launcher, '20261126-000000-00000001');
    await launcher.launch({ runId: run.runId, owner, mode: 'express', created: { run, workflow } });
    await launcher.whenDone(owner.id);
    expect(logs).toEqual([`run ${run.runId} succeeded`]);
    // Reading the status back costs a parse of the item (~2 ms for a 100-node run) but is kept: taking it from the
    // engine's cache instead left serve's peak RSS ~50 MiB higher under 200 runs at once (bench/serve-throughput.ts).
    expect(reads).toEqual({ getRun: 1 });
  });

  it("launched in a worker thread with a copy of its workflow: the creator's validation counts, the copy is not validated again", async () => {
    const host = new LocalHost({ store: new MemoryRunStore() });
    const launcher = new LocalRunLauncher(host, () => undefined);
    const { run, owner, workflow } = await created(host, launcher, '20261126-000000-00000002');
    // What serve's main thread sends a worker: a structured clone, with what validating the original found. Here it
    // says the workflow has an error it does not have: the run fails with it only if the copy is not validated again.
    const issues = [{ severity: 'error' as const, code: 'SEEDED', message: 'found where the run was created', path: 'nodes' }];
    await launcher.launch({ runId: run.runId, owner, mode: 'express', created: { run, workflow: structuredClone(workflow), issues } });
    await launcher.whenDone(owner.id);
    const failed = await host.report(run.runId);
    expect(failed?.status).toBe('failed');
    expect(JSON.stringify(failed?.errors)).toContain('found where the run was created');
  });

  it('logs what another writer made of the run (a cancel from another process)', async () => {
    const store = new MemoryRunStore();
    const host = new LocalHost({ store, cancelPollMs: 20 });
    const logs: string[] = [];
    const launcher = new LocalRunLauncher(host, (message) => logs.push(message));
    const runId = '20261126-000000-00000003';
    const owner = launcher.newOwner(runId, 0);
    const parsed = parseWorkflow({ nodes: [{ id: 'wait', type: 'shell', params: { command: 'sleep 5' } }] });
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
    const spec = { runId, workflow: parsed.workflow, workflowName: 'wait', params: {}, owner, repairEnabled: false, maxRepairs: 0, now: Date.now() };
    const run = await createRun(store, spec);
    await launcher.launch({ runId, owner, mode: 'express', created: { run, workflow: parsed.workflow } });
    while ((await store.getRun(runId))?.current === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    // As `flowmend cancel` does beside serve: a write to the store, not through this launcher.
    await cancelRun(store, runId, Date.now());
    await launcher.whenDone(owner.id);
    expect(logs).toEqual([`run ${runId} cancelled`]);
  });
});

describe('a run resumed in this process with a patch', () => {
  /** A run of `chain()` whose second node failed, claimed with a patch that mends it, as serve's API resumes one. */
  const claimedWithPatch = async (store: RunStore, host: LocalHost, launcher: LocalRunLauncher) => {
    const broken = chain();
    const failing = { ...broken, nodes: broken.nodes.map((n) => (n.id === 'b' ? { ...n, params: { expression: '$error("broken")' } } : n)) };
    const first = await host.start({ workflow: failing, workflowName: 'chain', params: {}, repairEnabled: false, maxRepairs: 0 });
    expect(first.status).toBe('failed');
    const checked = await checkRunPatch(store, first.run_id, chain(), { catalog: host.catalog, now: Date.now(), reason: 'test' });
    if (!checked.ok) throw new Error(checked.message);
    const owner = launcher.newOwner(first.run_id, Date.now());
    const run = await claimRun(store, first.run_id, { owner, now: Date.now(), isAlive: async () => false, patch: checked.item });
    return { run, owner, patched: checked.item.ir, listed: checked.listed };
  };

  it('is driven from the item its claim wrote and the version it checked: neither is read back', async () => {
    const { store, reads } = countingStore();
    const host = new LocalHost({ store });
    const launcher = new LocalRunLauncher(host, () => undefined);
    const { run, owner, patched } = await claimedWithPatch(store, host, launcher);
    for (const key of Object.keys(reads)) delete reads[key];
    await launcher.launch({ runId: run.runId, owner, mode: 'express', resumed: { run, patched } });
    await launcher.whenDone(owner.id);
    expect((await host.report(run.runId))?.status).toBe('succeeded');
    // The status the launcher logs and the report above (its two workflow versions): the engine read neither
    // the item nor the version, only the records its walk replays.
    expect(reads).toEqual({ listRecords: 2, getRun: 2, getIrVersion: 2, listEvents: 1 });
  });

  it('walks the records its patch check listed: the walk lists none', async () => {
    const { store, reads } = countingStore();
    const host = new LocalHost({ store });
    const launcher = new LocalRunLauncher(host, () => undefined);
    const { run, owner, patched, listed } = await claimedWithPatch(store, host, launcher);
    expect(listed.map((r) => [r.nodeId, r.status])).toEqual([
      ['a', 'completed'],
      ['b', 'failed'],
    ]);
    for (const key of Object.keys(reads)) delete reads[key];
    await launcher.launch({ runId: run.runId, owner, mode: 'express', resumed: { run, patched, listed } });
    await launcher.whenDone(owner.id);
    const report = await host.report(run.runId);
    expect(report?.status).toBe('succeeded');
    // `a` replayed from the listing, `b` run again with the patch: the same steps as with the walk's own listing.
    expect(report?.steps.map((s) => [s.node_id, s.status])).toEqual([
      ['a', 'completed'],
      ['b', 'failed'],
      ['a', 'cached'],
      ['b', 'completed'],
    ]);
    expect(reads).toEqual({ listRecords: 1, getRun: 2, getIrVersion: 2, listEvents: 1 });
  });
});
