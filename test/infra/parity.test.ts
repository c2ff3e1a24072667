import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAnthropicLlmClient } from '../../functions/adapters/anthropic-llm-client.ts';
import { makeAnthropicRepairLlm } from '../../functions/adapters/anthropic-repair-llm.ts';
import type { AslDefinition } from '../../functions/core/definition.ts';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { makeCatalog } from '../../functions/core/node-type.ts';
import type { RunReport } from '../../functions/core/run-report.ts';
import { makeRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { httpRunner } from '../../functions/nodes/http.ts';
import { makeLlmRunner } from '../../functions/nodes/llm.ts';
import { shellRunner } from '../../functions/nodes/shell.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';
import { extractStateMachines } from '../support/cfn-asl.ts';
import { type FakeAnthropic, startFakeAnthropic } from '../support/fake-anthropic.ts';
import { type HttpTestServer, startHttpTestServer } from '../support/http-test-server.ts';
import { synthFlowmend } from '../support/synth-flowmend.ts';
import { asCfn, logicalId } from './stack-helpers.ts';

let server: HttpTestServer;
let fake: FakeAnthropic;
beforeAll(async () => {
  [server, fake] = await Promise.all([startHttpTestServer(), startFakeAnthropic()]);
});
afterAll(() => Promise.all([server.close(), fake.close()]));

const cfn = asCfn(synthFlowmend().template);
const machines = extractStateMachines(cfn);
const synthesized = {
  express: machines[logicalId(cfn, 'AWS::StepFunctions::StateMachine', 'Express')] as unknown as AslDefinition,
  standard: machines[logicalId(cfn, 'AWS::StepFunctions::StateMachine', 'Standard')] as unknown as AslDefinition,
};

const runOn = async (definition: AslDefinition | undefined, workflow: WorkflowInput, repairEnabled: boolean, maxAdvances?: number) => {
  const runners = [
    shellRunner,
    transformRunner,
    httpRunner,
    makeLlmRunner({ config: () => ({ apiKey: 'test-key', baseURL: fake.baseURL }), client: makeAnthropicLlmClient() }),
  ];
  const host = new LocalHost({
    store: new MemoryRunStore(),
    runners,
    retryIntervalMs: 0,
    ...(definition === undefined ? {} : { definition }),
    ...(maxAdvances === undefined ? {} : { executionLimits: { maxAdvances, maxMs: 600_000 } }),
    makeRepairHandler: ({ store }) =>
      makeRepairHandler({
        store,
        catalog: makeCatalog(runners),
        llm: makeAnthropicRepairLlm({ apiKey: 'test-key', baseURL: fake.baseURL }),
        model: 'claude-haiku-4-5',
        now: Date.now,
      }),
  });
  const report = await host.start({
    workflow: WorkflowSchema.parse(workflow),
    workflowName: 'parity',
    params: { name: 'world' },
    repairEnabled,
    maxRepairs: 3,
  });
  return { report, stats: host.stats };
};

/** The report without what differs between two runs of the same workflow (ids, times, durations). */
const comparable = (report: RunReport): unknown =>
  JSON.parse(JSON.stringify(report), (key, value: unknown) => (/^(run_id|duration_ms|started_at|created_at|at)$/.test(key) ? undefined : value));

const shell = (id: string, command: string) => ({ id, type: 'shell', params: { command } });
const apiError = () => `${server.url}/json?body=${encodeURIComponent(JSON.stringify({ ok: false, error: 'channel_not_found' }))}`;
const broken: WorkflowInput = {
  description: 'greets, then counts the letters of the greeting',
  inputs: { name: { type: 'string', required: false, default: 'world' } },
  nodes: [shell('greet', 'echo hello ${name}'), shell('count', 'exit 9')],
  edges: [{ from: 'greet', to: 'count', action: 'default' }],
  outputs: { count: { source: '${count.stdout}' } },
};
const repaired = {
  ...broken,
  nodes: [shell('greet', 'echo hello ${name}'), { ...shell('count', 'wc -c'), params: { command: 'wc -c', stdin: '${greet.stdout}' } }],
};

type Scenario = {
  name: string;
  workflow: () => WorkflowInput;
  repairEnabled?: boolean;
  maxAdvances?: number;
  before?: () => void;
  check: (r: RunReport) => void;
};
const scenarios: Scenario[] = [
  {
    name: 'succeeds',
    workflow: () => ({
      inputs: { name: { type: 'string', required: true } },
      nodes: [
        shell('greet', 'echo hello ${name}'),
        { id: 'shout', type: 'transform', params: { expression: '$uppercase($trim($))', input: '${greet.stdout}' } },
      ],
      edges: [{ from: 'greet', to: 'shout', action: 'default' }],
      outputs: { loud: { source: '${shout.result}' } },
    }),
    check: (r) => {
      expect(r.errors).toEqual([]);
      expect(r.status).toBe('succeeded');
      expect(r.result).toEqual({ loud: 'HELLO WORLD' });
    },
  },
  {
    name: 'branches on an error edge',
    workflow: () => ({
      nodes: [shell('check', 'exit 3'), shell('happy', 'echo fine'), shell('handle', 'echo handled')],
      edges: [
        { from: 'check', to: 'happy', action: 'default' },
        { from: 'check', to: 'handle', action: 'error' },
      ],
    }),
    check: (r) => {
      expect(r.status).toBe('succeeded');
      expect(r.steps.map((s) => s.node_id)).toEqual(['check', 'handle']);
    },
  },
  {
    name: 'fails',
    repairEnabled: false,
    workflow: () => ({
      nodes: [shell('boom', 'echo oops >&2; exit 3'), shell('never', 'echo never')],
      edges: [{ from: 'boom', to: 'never', action: 'default' }],
    }),
    check: (r) => {
      expect(r.status).toBe('failed');
      expect(r.errors).toContainEqual(expect.objectContaining({ node_id: 'boom', fixable: true }));
      expect(r.steps.map((s) => s.node_id)).toEqual(['boom']);
    },
  },
  {
    name: 'warns and stops without repair',
    workflow: () => ({
      nodes: [{ id: 'call', type: 'http', params: { url: apiError() } }, shell('after', 'echo after')],
      edges: [{ from: 'call', to: 'after', action: 'default' }],
    }),
    check: (r) => {
      expect(r.status).toBe('failed');
      expect(r.warnings).toContainEqual(expect.objectContaining({ node_id: 'call', category: 'non_repairable', fixable: false }));
      expect(r.repairs).toEqual([]);
    },
  },
  {
    name: 'repairs and resumes from the failed node',
    workflow: () => broken,
    before: () => fake.enqueue({ text: JSON.stringify({ workflow: repaired, reason: 'count the greeting instead of exiting' }) }),
    check: (r) => {
      expect(r.status).toBe('succeeded');
      expect(r.repairs).toHaveLength(1);
      expect(r.steps.filter((s) => s.node_id === 'greet' && !s.cached)).toHaveLength(1);
      expect(String(r.result.count).trim()).toBe('11');
    },
  },
  {
    name: 'continues as new executions of the same run',
    maxAdvances: 2,
    workflow: () => ({
      nodes: ['a', 'b', 'c', 'd', 'e'].map((id) => shell(id, `echo ${id}`)),
      edges: ['a', 'b', 'c', 'd'].map((from, i) => ({ from, to: ['b', 'c', 'd', 'e'][i] ?? '', action: 'default' })),
      outputs: { last: { source: '${e.stdout}' } },
    }),
    check: (r) => {
      expect(r.status).toBe('succeeded');
      expect(r.steps.map((s) => s.node_id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    },
  },
];

describe('the synthesized state machine runs like the local one', () => {
  it('Express and Standard carry the same definition', () => {
    expect(synthesized.standard).toEqual(synthesized.express);
  });

  it.each(scenarios)('a workflow that $name', async ({ workflow, repairEnabled = true, maxAdvances, before, check }) => {
    before?.();
    const local = await runOn(undefined, workflow(), repairEnabled, maxAdvances);
    // biome-ignore lint/suspicious/noDuplicateTestHooks: `before` is the scenario's own set-up, not a vitest hook
    before?.();
    const aws = await runOn(synthesized.express, workflow(), repairEnabled, maxAdvances);
    check(aws.report);
    if (maxAdvances !== undefined) expect(aws.stats.executions).toBeGreaterThan(1);
    expect(comparable(aws.report)).toEqual(comparable(local.report));
    expect(aws.stats).toEqual(local.stats);
    expect(fake.pending()).toBe(0);
  });
});
