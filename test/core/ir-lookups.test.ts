// A workflow's nodes and edges are looked up through an index made at the first lookup (ir.ts): a walk over n
// nodes was n² comparisons. The lookups answer what a scan of the arrays answers, and follow the arrays.
import { describe, expect, it } from 'vitest';
import { parseWorkflow } from '../../functions/core/index.ts';
import { nextNodeId, nodeById, type Workflow } from '../../functions/core/ir.ts';

const workflow = (): Workflow => {
  const parsed = parseWorkflow({
    nodes: [
      { id: 'a', type: 'transform', params: { expression: '1' } },
      { id: 'b', type: 'transform', params: { expression: '2' } },
      { id: 'c', type: 'transform', params: { expression: '3' } },
    ],
    edges: [
      { from: 'a', to: 'b' },
      { from: 'a', to: 'c', action: 'error' },
      { from: 'b', to: 'c', action: 'retry' },
    ],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  return parsed.workflow;
};

describe("a workflow's node and edge lookups", () => {
  it('find a node by id and the node an action leads to, as a scan of the arrays does', () => {
    const wf = workflow();
    expect(nodeById(wf, 'b')).toBe(wf.nodes[1]);
    expect(nodeById(wf, 'missing')).toBeUndefined();
    expect(nextNodeId(wf, 'a', 'default')).toBe('b');
    expect(nextNodeId(wf, 'a', 'error')).toBe('c');
    expect(nextNodeId(wf, 'b', 'default')).toBeUndefined();
    expect(nextNodeId(wf, 'c', 'default')).toBeUndefined();
    // Ids and actions are compared whole: no key made of two parts answers for another pair.
    expect(nextNodeId(wf, 'a\u0000error', '')).toBeUndefined();
  });

  it('answer with the first match, as find did, when an id or an edge repeats', () => {
    const wf = workflow();
    const duplicate = { ...(wf.nodes[2] as Workflow['nodes'][number]), params: { expression: '4' } };
    const repeated: Workflow = { ...wf, nodes: [...wf.nodes, duplicate], edges: [...wf.edges, { from: 'a', to: 'a', action: 'default' }] };
    expect(nodeById(repeated, 'c')).toBe(wf.nodes[2]);
    expect(nextNodeId(repeated, 'a', 'default')).toBe('b');
  });

  it('follow the arrays: new arrays, or a node or edge pushed onto them, are seen', () => {
    const wf = workflow();
    expect(nextNodeId(wf, 'c', 'default')).toBeUndefined();
    wf.edges.push({ from: 'c', to: 'a', action: 'default' });
    expect(nextNodeId(wf, 'c', 'default')).toBe('a');
    wf.nodes.push({ id: 'd', type: 'transform', params: { expression: '5' } } as Workflow['nodes'][number]);
    expect(nodeById(wf, 'd')?.id).toBe('d');
    wf.edges = [{ from: 'a', to: 'd', action: 'default' }];
    expect(nextNodeId(wf, 'a', 'default')).toBe('d');
    wf.nodes = wf.nodes.filter((node) => node.id !== 'b');
    expect(nodeById(wf, 'b')).toBeUndefined();
  });
});
