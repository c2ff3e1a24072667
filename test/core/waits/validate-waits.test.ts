import { describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../../functions/core/ir.ts';
import { parseWorkflow, type ValidationIssue, validateWorkflow } from '../../../functions/core/validate.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';

const errors = (raw: WorkflowInput): ValidationIssue[] => {
  const parsed = parseWorkflow(raw);
  if (!parsed.ok) throw new Error(`does not parse: ${JSON.stringify(parsed.issues)}`);
  return validateWorkflow(parsed.workflow, builtinCatalog).filter((i) => i.severity === 'error');
};
const oneNode = (node: Record<string, unknown>): WorkflowInput => ({ nodes: [{ id: 'pause', type: 'wait', params: {}, ...node }] }) as WorkflowInput;

describe('validating the nodes that pause a run (before any run)', () => {
  it('takes exactly one of seconds and until on a wait, checks literal values, and leaves templated ones to when they resolve', () => {
    expect(errors(oneNode({ params: { seconds: 86_400 } }))).toEqual([]);
    expect(errors(oneNode({ params: { until: '2026-12-07T09:00:00+01:00' } }))).toEqual([]);
    expect(errors(oneNode({ params: {} }))).toEqual([
      expect.objectContaining({ path: 'nodes[0].params', code: 'WAIT_PARAMS', message: expect.stringContaining('needs "seconds" or "until"') }),
    ]);
    expect(errors(oneNode({ params: { seconds: 60, until: '2026-12-07T09:00:00Z' } }))).toEqual([
      expect.objectContaining({ code: 'WAIT_PARAMS', message: expect.stringContaining('not both') }),
    ]);
    const notADate = errors(oneNode({ params: { until: 'next tuesday' } }));
    expect(notADate).toHaveLength(1);
    expect(notADate[0]?.message).toContain('ISO 8601');
    expect(errors(oneNode({ params: { seconds: 400 * 86_400 } }))[0]?.message).toContain('at most 31622400 seconds');
    expect(errors(oneNode({ params: { seconds: -1 } }))[0]?.message).toContain('0 or more');
    const templated: WorkflowInput = {
      inputs: { at: { type: 'string', required: true } },
      nodes: [{ id: 'pause', type: 'wait', params: { until: '${at}' } }],
    };
    expect(errors(templated)).toEqual([]);
  });

  it('refuses a batched wait and any wait or gate inside a nested workflow, naming the field', () => {
    expect(errors(oneNode({ params: { seconds: 1 }, batch: { items: [1, 2] } }))).toEqual([
      expect.objectContaining({ path: 'nodes[0].batch', code: 'BATCH_UNSUPPORTED' }),
    ]);
    const child = (node: Record<string, unknown>): WorkflowInput => ({
      nodes: [{ id: 'child', type: 'workflow', params: { workflow_ir: { nodes: [node] } } }],
    });
    const waits = errors(child({ id: 'hook', type: 'wait-for-event', params: {} }));
    expect(waits).toEqual([expect.objectContaining({ code: 'WAIT_IN_CHILD_WORKFLOW', message: expect.stringContaining("'hook'") })]);
    const gates = errors(child({ id: 'send', type: 'shell', approval: 'required', params: { command: 'true' } }));
    expect(gates).toEqual([expect.objectContaining({ code: 'WAIT_IN_CHILD_WORKFLOW', message: expect.stringContaining('an approval gate') })]);
  });
});
