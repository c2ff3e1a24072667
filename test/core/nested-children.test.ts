import { describe, expect, it } from 'vitest';
import { type WorkflowInput, WorkflowSchema } from '../../functions/core/ir.ts';
import { childRunId } from '../../functions/core/nested/child-run.ts';
import { type ChildLoader, inlineChildWorkflows } from '../../functions/core/nested/inline-children.ts';
import type { RunItem } from '../../functions/core/run-model.ts';

const wf = (input: WorkflowInput) => WorkflowSchema.parse(input);
const calls = (source: Record<string, unknown>) => wf({ nodes: [{ id: 'call', type: 'workflow', params: source }] });
const leaf = { nodes: [{ id: 'leaf', type: 'transform', params: { expression: '${x}' } }] };

/** Registered workflows by name, as the API's registry gives them. */
const registry =
  (workflows: Record<string, unknown>): ChildLoader =>
  async (source) => {
    if (source.kind === 'ref') return { ok: false, message: 'no files here' };
    const raw = workflows[source.name];
    return raw === undefined ? { ok: false, message: `no workflow '${source.name}'` } : { ok: true, raw, origin: `name:${source.name}` };
  };

describe('inlineChildWorkflows', () => {
  it("freezes each named child into its node, keeping the name beside it, and leaves the child's templates as written", async () => {
    const result = await inlineChildWorkflows(calls({ workflow_name: 'leaf' }), 'name:top', registry({ leaf }));
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.workflow.nodes[0]?.params).toMatchObject({ workflow_name: 'leaf', workflow_ir: { nodes: [{ id: 'leaf', params: { expression: '${x}' } }] } });
  });

  it('names a cycle, also one through an inline child', async () => {
    const direct = await inlineChildWorkflows(
      calls({ workflow_name: 'b' }),
      'name:a',
      registry({ a: calls({ workflow_name: 'b' }), b: calls({ workflow_name: 'a' }) }),
    );
    expect(direct.ok ? [] : direct.issues.map((i) => [i.code, i.message])).toEqual([['WORKFLOW_CYCLE', expect.stringContaining('name:a -> name:b -> name:a')]]);
    const inline = await inlineChildWorkflows(calls({ workflow_ir: calls({ workflow_name: 'a' }) }), 'name:a', registry({ a: calls({ workflow_name: 'x' }) }));
    expect(inline.ok ? [] : inline.issues.map((i) => i.code)).toEqual(['WORKFLOW_CYCLE']);
    expect(inline.ok ? '' : inline.issues[0]?.path).toBe('nodes[0].params.workflow_ir.nodes[0].params.workflow_name');
  });

  it('refuses nesting past the smallest max_depth above, and a name it cannot find', async () => {
    const deep = await inlineChildWorkflows(
      calls({ workflow_name: 'one', max_depth: 2 }),
      'name:top',
      registry({ one: calls({ workflow_name: 'two' }), two: calls({ workflow_name: 'three' }), three: leaf }),
    );
    expect(deep.ok ? [] : deep.issues.map((i) => i.code)).toEqual(['NESTING_TOO_DEEP']);
    const missing = await inlineChildWorkflows(calls({ workflow_name: 'nope' }), 'name:top', registry({}));
    expect(missing.ok ? [] : missing.issues.map((i) => i.message)).toEqual([expect.stringContaining("workflow_name 'nope': no workflow 'nope'")]);
  });
});

describe('childRunId', () => {
  it('is the same for the same node visit, different per visit, and stays a valid run id at any depth', () => {
    let run = { runId: '20261123-194829-448fe41a' } as RunItem;
    expect(childRunId(run, 'sub', 1)).toBe(childRunId(run, 'sub', 1));
    expect(childRunId(run, 'sub', 1)).not.toBe(childRunId(run, 'sub', 2));
    for (let depth = 0; depth < 20; depth += 1) {
      const id = childRunId(run, 'sub', 1);
      expect(id).toMatch(/^20261123-194829-448fe41a-c[0-9a-f]{12}$/);
      run = { runId: id, parent: { runId: run.runId, nodeId: 'sub', seq: 1, depth: depth + 1, errorAction: 'error' } } as RunItem;
    }
  });
});
