import { describe, expect, it } from 'vitest';
import { prepareRun } from '../../functions/core/prepare-run.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

const echo = (timeout_s?: number) => ({
  nodes: [{ id: 'a', type: 'shell', params: { command: 'echo ${n}', ...(timeout_s ? { timeout_s } : {}) } }],
  inputs: { n: { type: 'number' } },
});
const request = (workflow: unknown, more: Record<string, unknown> = {}) => ({ workflow, params: { n: '2' }, repairEnabled: false, maxRepairs: 3, ...more });

describe('prepareRun (CLI, StartRun and the API start runs through it)', () => {
  it('returns the run to create: coerced params, a name, and the state machine its nodes need', () => {
    expect(prepareRun(request(echo()), builtinCatalog)).toMatchObject({
      ok: true,
      spec: { params: { n: 2 }, workflowName: 'workflow', mode: 'express', maxRepairs: 3 },
    });
    expect(prepareRun(request(echo(600)), builtinCatalog)).toMatchObject({ ok: true, spec: { mode: 'standard' } });
    expect(prepareRun(request(echo(600), { mode: 'express', workflowName: 'w' }), builtinCatalog)).toMatchObject({
      ok: true,
      spec: { mode: 'express', workflowName: 'w' },
    });
  });

  it('refuses, as data, a workflow that does not parse, inputs that do not coerce, and an invalid workflow without repair', () => {
    expect(prepareRun(request({ nodes: 'none' }), builtinCatalog)).toMatchObject({
      ok: false,
      status: 'invalid',
      stage: 'parse',
      message: expect.stringMatching(/nodes/),
    });
    expect(prepareRun(request(echo(), { params: { n: 'x' } }), builtinCatalog)).toMatchObject({ ok: false, stage: 'inputs', problems: [{ input: 'n' }] });
    const typo = { nodes: [{ id: 'a', type: 'shel', params: {} }] };
    expect(prepareRun(request(typo, { params: {} }), builtinCatalog)).toMatchObject({ ok: false, stage: 'validation', message: expect.stringMatching(/shel/) });
    // With repair on, the first Advance repairs it before any node runs.
    expect(prepareRun(request(typo, { params: {}, repairEnabled: true }), builtinCatalog)).toMatchObject({
      ok: true,
      spec: { issues: [expect.objectContaining({ severity: 'error' })] },
    });
  });
});
