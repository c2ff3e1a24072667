import { describe, expect, it } from 'vitest';
import { inProcessApi } from '../support/in-process-api.ts';

// workflow_name through the API: the registry resolves the child when the run starts (the same app `serve` and the API Lambda run).
const api = () => inProcessApi();

const shout = {
  inputs: { text: { type: 'string' as const } },
  nodes: [{ id: 'up', type: 'transform', params: { expression: '$uppercase($)', input: '${text}' } }],
  outputs: { loud: { source: '${up.result}' } },
};
const caller = (child: string) => ({
  nodes: [{ id: 'call', type: 'workflow', params: { workflow_name: child, param_mapping: { text: 'hi' } } }],
  outputs: { said: { source: '${call.loud}' } },
});

describe('workflow_name over the API', () => {
  it('runs a registered child by name, and nests it in the run report', async () => {
    const { call, launcher } = api();
    expect((await call('PUT', '/workflows/shout', shout)).status).toBe(201);
    expect((await call('PUT', '/workflows/caller', caller('shout'))).status).toBe(201);
    const started = await call('POST', '/runs', { workflow_name: 'caller' });
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    await launcher.settle();
    const report = await call('GET', `/runs/${String(started.body.run_id)}`);
    expect(report.body).toMatchObject({
      status: 'succeeded',
      result: { said: 'HI' },
      children: [{ node_id: 'call', status: 'succeeded', result: { loud: 'HI' } }],
    });
  });

  it('refuses a cycle of registered names and an unknown name with a 422 naming them', async () => {
    const { call } = api();
    expect((await call('PUT', '/workflows/ping', caller('pong'))).status).toBe(422);
    expect((await call('PUT', '/workflows/pong', caller('missing'))).body.error?.message).toMatch(/no registered workflow 'missing'/);
    expect((await call('PUT', '/workflows/selfish', caller('selfish'))).body.error?.message).toMatch(/no registered workflow 'selfish'/);
    expect((await call('PUT', '/workflows/leaf', shout)).status).toBe(201);
    expect((await call('PUT', '/workflows/a', caller('leaf'))).status).toBe(201);
    // 'leaf' now names 'a', which names 'leaf': the registry holds a cycle, refused when a run would start.
    expect((await call('PUT', '/workflows/leaf', { ...caller('a'), inputs: { text: { type: 'string' } } })).body.error?.message).toMatch(
      /cycle of workflows: name:leaf -> name:a -> name:leaf/,
    );
  });
});
