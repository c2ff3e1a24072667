import { describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { parseWorkflow, validateWorkflow } from '../../functions/core/validate.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

const catalog = builtinCatalog;
const issuesOf = (raw: WorkflowInput) => {
  const parsed = parseWorkflow(raw);
  if (!parsed.ok) throw new Error(`did not parse: ${JSON.stringify(parsed.issues)}`);
  return validateWorkflow(parsed.workflow, catalog);
};
const codes = (raw: WorkflowInput) => issuesOf(raw).map((i) => `${i.severity}:${i.code}`);

describe('validate: shell substitution', () => {
  it('warns on a raw shell node that substitutes templates, and not on a quoted one', () => {
    const inputs = { name: { type: 'string' as const } };
    expect(codes({ inputs, nodes: [{ id: 'a', type: 'shell', params: { command: 'echo ${name}', raw: true } }] })).toEqual(['warning:RAW_SUBSTITUTION']);
    expect(codes({ inputs, nodes: [{ id: 'a', type: 'shell', params: { command: 'echo ${name}' } }] })).toEqual([]);
    expect(codes({ nodes: [{ id: 'a', type: 'shell', params: { command: 'echo hi', raw: true } }] })).toEqual([]);
  });

  it('refuses a template inside a here-document, pointing to stdin and env', () => {
    const issues = issuesOf({ inputs: { name: { type: 'string' } }, nodes: [{ id: 'a', type: 'shell', params: { command: 'cat <<EOF\nhi ${name}\nEOF' } }] });
    expect(issues).toEqual([
      expect.objectContaining({
        code: 'UNQUOTABLE_TEMPLATE',
        severity: 'error',
        path: 'nodes[0].params.command',
        hint: expect.stringContaining('"stdin" or "env"'),
      }),
    ]);
  });
});

describe('validate: cycles', () => {
  it('warns on a cycle that no edge leaves and no action ends', () => {
    const issues = issuesOf({
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'true' } },
        { id: 'b', type: 'shell', params: { command: 'true' } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ],
    });
    expect(issues).toEqual([expect.objectContaining({ code: 'CYCLE_WITHOUT_EXIT', severity: 'warning', message: expect.stringContaining("'a', 'b'") })]);
  });

  it('accepts a loop with an exit edge, or with a node whose default action ends the run', () => {
    const nodes = [
      { id: 'a', type: 'shell', params: { command: 'true' } },
      { id: 'b', type: 'shell', params: { command: 'true' } },
      { id: 'c', type: 'shell', params: { command: 'true' } },
    ];
    expect(
      codes({
        nodes,
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a' },
          { from: 'b', to: 'c', action: 'error' },
        ],
      }),
    ).toEqual([]);
    expect(
      codes({
        nodes: nodes.slice(0, 2),
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'a', action: 'error' },
        ],
      }),
    ).toEqual([]);
  });

  it('still finds templates that name a node running later, in a large chain', () => {
    const n = 1000;
    const nodes = Array.from({ length: n }, (_, i) => ({
      id: `n${i}`,
      type: 'shell',
      params: { command: i === 0 ? 'echo ${n999.stdout}' : `echo \${n${i - 1}.stdout}` },
    }));
    const edges = Array.from({ length: n - 1 }, (_, i) => ({ from: `n${i}`, to: `n${i + 1}` }));
    expect(codes({ nodes, edges })).toEqual(['error:TEMPLATE_NOT_UPSTREAM']);
  });
});

describe('names that are Object.prototype members', () => {
  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])('refuses %s as an input, output or node name with a clear message', (name) => {
    const raw = JSON.parse(`{"inputs": {"${name}": {"type": "string"}}, "outputs": {"${name}": {"source": "\${a.stdout}"}},
      "nodes": [{"id": "${name}", "type": "shell", "params": {"command": "true"}}, {"id": "a", "type": "shell", "params": {"command": "true"}}]}`);
    const parsed = parseWorkflow(raw);
    expect(parsed.ok).toBe(false);
    const messages = parsed.ok ? [] : parsed.issues.map((i) => i.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        `input name '${name}' is reserved (a built-in property name of JavaScript objects); choose another name`,
        `output name '${name}' is reserved (a built-in property name of JavaScript objects); choose another name`,
      ]),
    );
    if (name !== '__proto__') expect(messages.join('\n')).toContain(`node id '${name}' is reserved`);
  });
});

describe('buildGraph', () => {
  it('reaches through a cycle to what follows it, and not backwards', async () => {
    const { buildGraph } = await import('../../functions/core/graph.ts');
    const parsed = parseWorkflow({
      nodes: ['a', 'b', 'c', 'd'].map((id) => ({ id, type: 'shell', params: { command: 'true' } })),
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a', action: 'error' },
        { from: 'b', to: 'c' },
      ],
    });
    if (!parsed.ok) throw new Error('did not parse');
    const graph = buildGraph(parsed.workflow);
    expect([
      graph.reaches('a', 'c'),
      graph.reaches('b', 'c'),
      graph.reaches('a', 'a'),
      graph.reaches('c', 'a'),
      graph.reaches('c', 'c'),
      graph.reaches('a', 'd'),
    ]).toEqual([true, true, true, false, false, false]);
  });
});
