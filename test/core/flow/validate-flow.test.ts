import { describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../../functions/core/ir.ts';
import { parseWorkflow, type ValidationIssue, validateWorkflow } from '../../../functions/core/validate.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';

const errors = (raw: WorkflowInput): ValidationIssue[] => {
  const parsed = parseWorkflow(raw);
  if (!parsed.ok) throw new Error(`does not parse: ${JSON.stringify(parsed.issues)}`);
  return validateWorkflow(parsed.workflow, builtinCatalog).filter((i) => i.severity === 'error');
};
const shell = { id: 'call', type: 'shell', params: { command: 'echo hi' } };

describe('flow control in the workflow (before any run)', () => {
  it('parses keyed limits on the workflow and on nodes, and says what a bad one should be', () => {
    expect(
      errors({
        concurrency: { key: '${customer}', limit: 2 },
        debounce: { key: 'x', period_s: 60 },
        singleton: { key: 'y', mode: 'cancel-running' },
        inputs: { customer: { type: 'string' } },
        nodes: [{ ...shell, concurrency: { key: 'api', limit: 1 }, rate_limit: { key: 'github', limit: 10, period_s: 1 } }],
      }),
    ).toEqual([]);
    const bad = parseWorkflow({ nodes: [{ ...shell, rate_limit: { key: 'github', limit: 0, period_s: 1 } }] } as WorkflowInput);
    expect(bad.ok).toBe(false);
    expect(JSON.stringify(bad)).toContain('rate_limit');
    const mode = parseWorkflow({ singleton: { key: 'y', mode: 'latest' }, nodes: [shell] } as unknown as WorkflowInput);
    expect(mode).toMatchObject({ ok: false, issues: [{ path: 'singleton.mode', hint: 'Valid values: skip, cancel-running' }] });
  });

  it('refuses a node-level limit on a batch node', () => {
    expect(errors({ nodes: [{ ...shell, batch: { items: [1, 2] }, concurrency: { key: 'api', limit: 1 } }] } as WorkflowInput)).toEqual([
      expect.objectContaining({ path: 'nodes[0].concurrency', code: 'FLOW_CONTROL_ON_BATCH' }),
    ]);
  });
});
