import { describe, expect, it } from 'vitest';
import { startedWorkflows } from '../../functions/hosts/api/run-operations.ts';
import { envRepairHandler } from '../../functions/hosts/lambda/repair.ts';
import { inProcessApi } from '../support/in-process-api.ts';

// POST /runs keeps the workflows it parsed by their text (parsed-workflows.ts): runs of one workflow share one
// frozen object, through the real local host (the engine's caches hold it between the runs' steps).
const api = () => {
  // The rules repair without an LLM (no API key in this environment).
  const { call, launcher } = inProcessApi({ makeRepairHandler: envRepairHandler({}) });
  const started = async (body: unknown): Promise<string> => {
    const answer = await call('POST', '/runs', body);
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    return String(answer.body.run_id);
  };
  return { call, launcher, started };
};

// Inputs with a default (an object: a run's params must get a copy), a branch, nested params and outputs.
const greet = {
  inputs: { who: { type: 'string', required: false, default: 'world' }, tags: { type: 'object', required: false, default: { kind: 'greeting' } } },
  nodes: [
    { id: 'hello', type: 'transform', params: { expression: '{"text": "hello " & who, "tags": tags}', input: { who: '${who}', tags: '${tags}' } } },
    { id: 'check', type: 'transform', params: { expression: 'text = "hello world" ? "plain" : "named"', input: '${hello.result}' } },
    { id: 'plain', type: 'transform', params: { expression: '$uppercase(text)', input: '${hello.result}' } },
    { id: 'named', type: 'transform', params: { expression: 'text', input: '${hello.result}' } },
  ],
  edges: [
    { from: 'hello', to: 'check' },
    { from: 'check', to: 'plain', action: 'plain' },
    { from: 'check', to: 'named', action: 'named' },
  ],
  outputs: { text: { source: '${check.result}' }, tags: { source: '${hello.result.tags}' } },
};

describe('POST /runs with a workflow it parsed before', () => {
  it('parses it once, and each run does what it would alone on the shared frozen workflow', async () => {
    const { call, launcher, started } = api();
    const before = { ...startedWorkflows.stats };
    const ids = [await started({ workflow: greet }), await started({ workflow: greet, params: { who: 'Ada' } }), await started({ workflow: greet })];
    await launcher.settle();
    expect({ hits: startedWorkflows.stats.hits - before.hits, misses: startedWorkflows.stats.misses - before.misses }).toEqual({ hits: 2, misses: 1 });
    const reports = await Promise.all(ids.map(async (id) => (await call('GET', `/runs/${id}`)).body));
    expect(reports.map((r) => [r.status, r.result])).toEqual([
      ['succeeded', { text: 'plain', tags: { kind: 'greeting' } }],
      ['succeeded', { text: 'named', tags: { kind: 'greeting' } }],
      ['succeeded', { text: 'plain', tags: { kind: 'greeting' } }],
    ]);
    // A write to the shared workflow throws (it is frozen), so a run that changed it would have failed above.
    const workflows = await Promise.all(ids.map(async (id) => (await call('GET', `/runs/${id}/workflow`)).body.workflow));
    expect(workflows[0]).toMatchObject({ nodes: greet.nodes.map(({ id }) => ({ id })) });
    expect(workflows.slice(1)).toEqual([workflows[0], workflows[0]]);
  });

  it("repairs each run of a shared workflow in a version of the run's own, the shared one left as it was", async () => {
    const { call, launcher, started } = api();
    const typo = {
      nodes: [
        { id: 'a', type: 'transform', params: { expression: '"x"', input: 0 } },
        { id: 'b', type: 'transform', params: { expression: '$uppercase($)', input: '${a.reslt}' } },
      ],
      edges: [{ from: 'a', to: 'b' }],
      outputs: { out: { source: '${b.result}' } },
    };
    const ids = [await started({ workflow: typo }), await started({ workflow: typo })];
    await launcher.settle();
    for (const id of ids) {
      const report = (await call('GET', `/runs/${id}`)).body;
      expect(report).toMatchObject({ status: 'succeeded', result: { out: 'X' }, repairs: [{ source: 'rules' }] });
    }
    const parsed = startedWorkflows.parse(typo);
    expect(parsed.ok && parsed.workflow.nodes[1]?.params).toEqual({ expression: '$uppercase($)', input: '${a.reslt}' });
  });

  it('reads the registered children a workflow names at each start, not from the first', async () => {
    const { call, launcher, started } = api();
    const child = (expression: string) => ({
      nodes: [{ id: 'say', type: 'transform', params: { expression, input: 'x' } }],
      outputs: { said: { source: '${say.result}' } },
    });
    const parent = { nodes: [{ id: 'call', type: 'workflow', params: { workflow_name: 'child' } }], outputs: { said: { source: '${call.said}' } } };
    expect((await call('PUT', '/workflows/child', child('"one"'))).status).toBe(201);
    const first = await started({ workflow: parent });
    expect((await call('PUT', '/workflows/child', child('"two"'))).status).toBe(201);
    const second = await started({ workflow: parent });
    await launcher.settle();
    expect((await call('GET', `/runs/${first}`)).body.result).toEqual({ said: 'one' });
    expect((await call('GET', `/runs/${second}`)).body.result).toEqual({ said: 'two' });
  });

  it('answers a workflow that does not parse with the same error each time', async () => {
    const { call } = api();
    const broken = { nodes: [{ id: 'a', type: 'transform', params: { expression: '$' } }], edges: [{ from: 'a' }] };
    const answers = [await call('POST', '/runs', { workflow: broken }), await call('POST', '/runs', { workflow: broken })];
    expect(answers[0]?.status).toBe(422);
    expect(answers[0]?.body.error?.message).toMatch(/edges\[0\]\.to/);
    expect(answers[1]).toEqual(answers[0]);
  });
});
