/**
 * What runs cost on AWS, from runs on the local host (the same ASL and handlers, DynamoDB on dynalite):
 * state transitions and Lambda calls from the host's stats, DynamoDB requests and capacity units from
 * the DynamoDB client (every request asks for ConsumedCapacity). Run: node --import tsx bench/cost-model.ts
 */
import '../functions/adapters/node20-polyfills.ts';
import { cpus, platform, release, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { startDynalite } from '../functions/adapters/dynalite-server.ts';
import { DynamoJsonClient, type DynamoOperation } from '../functions/adapters/dynamo-json-client.ts';
import { createDocumentClient, DynamoRunStore } from '../functions/adapters/dynamo-run-store.ts';
import { ensureTable, GSI } from '../functions/adapters/table-schema.ts';
import type { RepairLlm, RunReport } from '../functions/core/index.ts';
import { DEFAULT_EXECUTION_LIMITS, makeCatalog, type NodeRunner, STATE, type WorkflowInput, WorkflowSchema } from '../functions/core/index.ts';
import { makeRepairHandler } from '../functions/hosts/lambda/repair.ts';
import { LocalHost } from '../functions/hosts/local/local-host.ts';
import { shellRunner } from '../functions/nodes/shell.ts';
import { transformRunner } from '../functions/nodes/transform.ts';
import { MODEL, PRICES, priceRun, type RunCounts } from './cost-prices.ts';

interface DynamoCounters {
  requests: number;
  byOperation: Record<string, number>;
  writeUnits: number;
  indexWriteUnits: number;
  readUnits: number;
  writeUnitsByItem: Record<string, number>;
}
type Capacity = { CapacityUnits?: number };

/** Counts every DynamoDB request the client sends, with the capacity units DynamoDB bills for it (GSI writes included). */
class CountingDynamoClient extends DynamoJsonClient {
  readonly counters: DynamoCounters = { requests: 0, byOperation: {}, writeUnits: 0, indexWriteUnits: 0, readUnits: 0, writeUnitsByItem: {} };

  override async send<T = Record<string, unknown>>(operation: DynamoOperation, request: object): Promise<T> {
    const counters = this.counters;
    const input = { ...request, ReturnConsumedCapacity: 'TOTAL' } as { Item?: Record<string, unknown>; ConditionExpression?: string };
    // The indexes project keys only, and a run's index keys never change: DynamoDB writes an index
    // entry (under 1 KB, so 1 unit) when the run item is created, and never on the rewrites after.
    const creates = input.ConditionExpression?.includes('attribute_not_exists') ?? false;
    const indexes = creates ? [GSI.byWorkflow.pk, GSI.byDay.pk].filter((key) => input.Item !== undefined && key in input.Item).length : 0;
    const result = await super.send<T>(operation, operation === 'CreateTable' || operation === 'DescribeTable' ? request : input);
    if (operation === 'CreateTable' || operation === 'DescribeTable') return result;
    counters.requests += 1;
    counters.byOperation[operation] = (counters.byOperation[operation] ?? 0) + 1;
    const consumed = (result as { ConsumedCapacity?: Capacity | Capacity[] }).ConsumedCapacity;
    const units = [consumed ?? []].flat().reduce((sum, c) => sum + (c.CapacityUnits ?? 0), 0);
    if (/^(Put|Update|Delete|BatchWrite)/.test(operation)) {
      const sk = input.Item?.sk as string | { S?: string } | undefined;
      const kind = `${(typeof sk === 'string' ? sk : (sk?.S ?? 'batch')).replace(/#.*/, '')}${indexes > 0 ? ` (+${indexes} GSI)` : ''}`;
      counters.writeUnits += units + indexes;
      counters.indexWriteUnits += indexes;
      counters.writeUnitsByItem[kind] = (counters.writeUnitsByItem[kind] ?? 0) + units + indexes;
    } else counters.readUnits += units;
    return result;
  }
}

/** Runners that add up the time spent in node code, so the rest of the wall time is the engine's. */
function timed(runners: readonly NodeRunner[]): { runners: NodeRunner[]; ms: () => number } {
  let total = 0;
  const wrap = (runner: NodeRunner): NodeRunner => ({
    ...runner,
    run: async (params, context) => {
      const started = performance.now();
      try {
        return await runner.run(params, context);
      } finally {
        total += performance.now() - started;
      }
    },
  });
  return { runners: runners.map(wrap), ms: () => total };
}

const chain = (n: number, last?: WorkflowInput['nodes'][number]): WorkflowInput => {
  const nodes: WorkflowInput['nodes'] = Array.from({ length: n }, (_, i) =>
    i === 0
      ? { id: 'n1', type: 'transform', params: { expression: '1' } }
      : { id: `n${i + 1}`, type: 'transform', params: { expression: '$ + 1', input: `\${n${i}.result}` } },
  );
  if (last) nodes[n - 1] = last;
  return {
    description: `a chain of ${n} nodes, each adding one to the previous result`,
    nodes,
    edges: nodes.slice(1).map((node, i) => ({ from: nodes[i]?.id ?? '', to: node.id, action: 'default' })),
    outputs: { last: { source: `\${${nodes[n - 1]?.id}.${last ? 'stdout' : 'result'}}` } },
  };
};

const failing = chain(100, { id: 'n100', type: 'shell', params: { command: 'echo "n99 gave ${n99.result}" >&2; exit 1' } });
const fixed = chain(100, { id: 'n100', type: 'shell', params: { command: 'echo ${n99.result}' } });
const scriptedRepairLlm: RepairLlm = {
  complete: async () => ({
    text: JSON.stringify({ workflow: fixed, reason: 'print the result instead of exiting 1' }),
    usage: { input_tokens: 2_000, output_tokens: 1_500 },
  }),
};

async function main(): Promise<void> {
  const dynalite = await startDynalite();
  const raw = new CountingDynamoClient({ endpoint: dynalite.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const dynamo = raw.counters;
  await ensureTable(raw, 'flowmend-cost');
  const store = new DynamoRunStore({ client: createDocumentClient(raw), tableName: 'flowmend-cost' });
  const { runners, ms: runnerMs } = timed([transformRunner, shellRunner]);
  const host = new LocalHost({
    store,
    runners,
    executionLimits: DEFAULT_EXECUTION_LIMITS,
    // As deployed: on AWS each record is written beside the run item (engineDepsFromEnv sets no batch).
    stepBatch: 1,
    makeRepairHandler: ({ store: s }) =>
      makeRepairHandler({ store: s, catalog: makeCatalog(runners), llm: scriptedRepairLlm, model: 'claude-haiku-4-5', now: Date.now }),
  });

  const measure = async (run: () => Promise<RunReport>): Promise<{ report: RunReport; counts: RunCounts; indexUnits: number }> => {
    const before = { stats: structuredClone(host.stats), dynamo: structuredClone(dynamo), runnerMs: runnerMs(), at: performance.now() };
    const report = await run();
    const wallMs = performance.now() - before.at;
    const calls = (pick: (state: string) => boolean) =>
      Object.entries(host.stats.tasks)
        .filter(([s]) => pick(s))
        .reduce((sum, [s, n]) => sum + n - (before.stats.tasks[s] ?? 0), 0);
    const executions = host.stats.executions - before.stats.executions;
    const nodeMs = runnerMs() - before.runnerMs;
    return {
      report,
      indexUnits: dynamo.indexWriteUnits - before.dynamo.indexWriteUnits,
      counts: {
        executions,
        transitions: host.stats.transitions - before.stats.transitions,
        engineCalls: calls((s) => s === STATE.advance || s === STATE.repair),
        runnerCalls: calls((s) => s.startsWith('Run')),
        engineMs: wallMs - nodeMs,
        runnerMs: nodeMs,
        writeUnits: dynamo.writeUnits - before.dynamo.writeUnits,
        readUnits: dynamo.readUnits - before.dynamo.readUnits,
        dynamoRequests: dynamo.requests - before.dynamo.requests,
      },
    };
  };
  const start = (workflow: WorkflowInput, repairEnabled: boolean) => () =>
    host.start({ workflow: WorkflowSchema.parse(workflow), workflowName: 'cost', params: {}, repairEnabled, maxRepairs: 3 });

  const rows: [string, { executed: number; replayed: number }, RunCounts, number][] = [];
  const nodes = (r: RunReport, before?: RunReport) => ({
    executed: r.metrics.nodes_executed - (before?.metrics.nodes_executed ?? 0),
    replayed: r.metrics.nodes_cached - (before?.metrics.nodes_cached ?? 0),
  });
  await measure(start(chain(10), false)); // warm-up: module caches, JIT, the table
  for (const n of [10, 100, 1000]) {
    const { report, counts, indexUnits } = await measure(start(chain(n), false));
    if (report.status !== 'succeeded') throw new Error(`${n}-node run ${report.status}: ${JSON.stringify(report.errors)}`);
    rows.push([`${n} nodes`, nodes(report), counts, indexUnits]);
  }
  const first = await measure(start(failing, false));
  if (first.report.status !== 'failed') throw new Error('the failing run did not fail');
  rows.push(['100 nodes, fails at the last', nodes(first.report), first.counts, first.indexUnits]);
  const resumed = await measure(() => host.resume(first.report.run_id, { repairEnabled: true }));
  if (resumed.report.status !== 'succeeded') throw new Error(`repair-and-resume ${resumed.report.status}: ${JSON.stringify(resumed.report.errors)}`);
  rows.push(['  then repair + resume', nodes(resumed.report, first.report), resumed.counts, resumed.indexUnits]);

  // Waits (DESIGN 7b): the same 3 nodes with a wait in the middle, of a minute and of 30 days, on a clock the
  // bench moves; each wait ends its execution and a wake-up starts the next. What AWS adds that the local host
  // cannot count (a Scheduler invocation, the wake Lambda) is priced below, per wait.
  let clockMs = Date.now();
  const scheduled: number[] = [];
  const waitHost = new LocalHost({
    store,
    runners,
    executionLimits: DEFAULT_EXECUTION_LIMITS,
    stepBatch: 1,
    now: () => clockMs,
    wakeups: { schedule: async (request) => void scheduled.push(request.at) },
  });
  const withWait = (seconds: number): WorkflowInput => ({
    nodes: [
      { id: 'n1', type: 'transform', params: { expression: '1' } },
      { id: 'pause', type: 'wait', params: { seconds } },
      { id: 'n2', type: 'transform', params: { expression: '$ + 1', input: '${n1.result}' } },
    ],
    edges: [
      { from: 'n1', to: 'pause' },
      { from: 'pause', to: 'n2' },
    ],
  });
  const measureOn = async (onHost: LocalHost, run: () => Promise<RunReport>) => {
    const before = { stats: structuredClone(onHost.stats), dynamo: structuredClone(dynamo), runnerMs: runnerMs(), at: performance.now() };
    const report = await run();
    const wallMs = performance.now() - before.at;
    const calls = (pick: (state: string) => boolean) =>
      Object.entries(onHost.stats.tasks)
        .filter(([s]) => pick(s))
        .reduce((sum, [s, n]) => sum + n - (before.stats.tasks[s] ?? 0), 0);
    const nodeMs = runnerMs() - before.runnerMs;
    const counts: RunCounts = {
      executions: onHost.stats.executions - before.stats.executions,
      transitions: onHost.stats.transitions - before.stats.transitions,
      engineCalls: calls((st) => st === STATE.advance || st === STATE.repair),
      runnerCalls: calls((st) => st.startsWith('Run')),
      engineMs: wallMs - nodeMs,
      runnerMs: nodeMs,
      writeUnits: dynamo.writeUnits - before.dynamo.writeUnits,
      readUnits: dynamo.readUnits - before.dynamo.readUnits,
      dynamoRequests: dynamo.requests - before.dynamo.requests,
    };
    return { report, counts };
  };
  const add = (a: RunCounts, b: RunCounts): RunCounts =>
    Object.fromEntries(Object.keys(a).map((k) => [k, a[k as keyof RunCounts] + b[k as keyof RunCounts]])) as unknown as RunCounts;
  const waitRows: [string, RunCounts][] = [];
  const noWait = await measureOn(waitHost, () =>
    waitHost.start({ workflow: WorkflowSchema.parse(chain(2)), workflowName: 'cost', params: {}, repairEnabled: false, maxRepairs: 0 }),
  );
  waitRows.push(['2 nodes, no wait', noWait.counts]);
  for (const [label, seconds] of [
    ['2 nodes + a 1-minute wait', 60],
    ['2 nodes + a 30-day wait', 30 * 86_400],
  ] as const) {
    const paused = await measureOn(waitHost, () =>
      waitHost.start({ workflow: WorkflowSchema.parse(withWait(seconds)), workflowName: 'cost', params: {}, repairEnabled: false, maxRepairs: 0 }),
    );
    if (paused.report.status !== 'waiting') throw new Error(`the wait run ${paused.report.status}`);
    clockMs += seconds * 1000 + 1000;
    const woken = await measureOn(waitHost, () => waitHost.wake(paused.report.run_id, paused.report.waiting?.wait_id as string));
    if (woken.report.status !== 'succeeded') throw new Error(`the woken run ${woken.report.status}: ${JSON.stringify(woken.report.errors)}`);
    waitRows.push([label, add(paused.counts, woken.counts)]);
  }
  await dynalite.close();

  const cpu = cpus();
  console.log(
    `flowmend cost model: ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, ${platform()} ${release()}, Node ${process.version}`,
  );
  console.log(
    `prices (us-east-1): Standard $${PRICES.standardPerTransition * 1000}/1k transitions; Express $1/M requests + $${PRICES.expressPerGbSecond}/GB-s (${MODEL.expressGb * 1024} MB, ${MODEL.expressBillingStepMs} ms steps); Lambda arm64 $0.20/M + $${PRICES.lambdaPerGbSecond}/GB-s at ${MODEL.lambdaGb * 1024} MB (engine calls billed >= ${MODEL.engineMsFloor} ms); DynamoDB on demand $0.625/M WRU, $0.125/M RRU`,
  );
  console.log('');
  const head = [
    'run',
    'executed',
    'replayed',
    'executions',
    'transitions',
    'per executed',
    'Lambda calls',
    'DynamoDB req',
    'WRU',
    'RRU',
    '$/1k Lambda',
    '$/1k DynamoDB',
    '$/1k Standard',
    '$/1k Express',
  ];
  const usd = (x: number) => (x * 1000).toFixed(4);
  const table = rows.map(([name, n, c]) => {
    const cost = priceRun(c);
    return [
      name,
      n.executed,
      n.replayed,
      c.executions,
      c.transitions,
      (c.transitions / Math.max(1, n.executed)).toFixed(2),
      c.engineCalls + c.runnerCalls,
      c.dynamoRequests,
      c.writeUnits,
      c.readUnits,
      usd(cost.lambda),
      usd(cost.dynamo),
      usd(cost.standard),
      usd(cost.express),
    ].map(String);
  });
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]?.length ?? 0)));
  for (const row of [head, ...table]) console.log(row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join('  '));

  console.log(
    `\nDynamoDB write units of all runs above, by item: ${Object.entries(dynamo.writeUnitsByItem)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  console.log('(index entries: the two keys-only GSIs are written once per run, when the run item is created)');
  const ten = priceRun(rows[0]?.[2] as RunCounts);
  const firstCost = priceRun(first.counts);
  const resumeCost = priceRun(resumed.counts);
  const ratio = (a: number, b: number) => `${((a / b) * 100).toFixed(1)}%`;
  console.log('');
  console.log(
    `1,000 runs of the 10-node workflow, Express (default): $${(ten.express * 1000).toFixed(4)} (Lambda $${(ten.lambda * 1000).toFixed(4)}, DynamoDB $${(ten.dynamo * 1000).toFixed(4)}); Standard: $${(ten.standard * 1000).toFixed(4)}. Target <= $0.05; Lambda durable functions $0.10-0.18, Temporal Cloud $0.61 for the same work`,
  );
  // Per wait on AWS, beyond what the local host counted: one Scheduler invocation ($1 per million), the wake
  // Lambda (one call, billed at the engine's floor: it only starts an execution).
  const wakeExtra = PRICES.schedulerPerInvocation + PRICES.lambdaPerRequest + (MODEL.engineMsFloor / 1000) * MODEL.lambdaGb * PRICES.lambdaPerGbSecond;
  const base0 = waitRows[0]?.[1] as RunCounts;
  const base = priceRun(base0);
  console.log('');
  for (const [label, c] of waitRows) {
    const cost = priceRun(c);
    const extra = c === base0 ? 0 : wakeExtra;
    console.log(
      `${label.padEnd(26)} executions ${c.executions}, transitions ${c.transitions}, Lambda calls ${c.engineCalls + c.runnerCalls}${extra ? ' (+1 wake)' : ''}, WRU ${c.writeUnits}, RRU ${c.readUnits}: per 1,000 runs Express $${((cost.express + extra) * 1000).toFixed(4)}, Standard $${((cost.standard + extra) * 1000).toFixed(4)}${extra ? `; the wait itself: Express $${((cost.express + extra - base.express) * 1000).toFixed(4)}, Standard $${((cost.standard + extra - base.standard) * 1000).toFixed(4)} per 1,000` : ''}`,
    );
  }
  console.log(
    `(an Express execution cannot wait past 5 minutes; one that waited 5 minutes in a Wait state would bill $${(300 * MODEL.expressGb * PRICES.expressPerGbSecond * 1000).toFixed(4)} per 1,000 for the wait alone)`,
  );
  console.log(
    `repair + resume of the 100-node run that failed at its last node: ${ratio(resumeCost.express, firstCost.express)} of the first run on Express, ${ratio(resumeCost.standard, firstCost.standard)} on Standard (target < 10%); ${nodes(resumed.report, first.report).replayed} nodes replayed in ${resumed.counts.transitions} transitions`,
  );
}

await main();
