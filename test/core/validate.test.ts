import { describe, expect, it } from 'vitest';
import type { WorkflowInput } from '../../functions/core/ir.ts';
import { makeCatalog, type NodeTypeSpec } from '../../functions/core/node-type.ts';
import { closestMatch, formatIssues, hasErrors, parseWorkflow, type ValidationIssue, validateWorkflow } from '../../functions/core/validate.ts';
import * as z from '../../functions/core/zod.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

const fakeSpec = (type: string, paramsSchema: z.ZodMiniObject, outputKeys: string[]): NodeTypeSpec => ({
  type,
  paramsSchema,
  outputKeys,
  sideEffects: () => false,
  timeoutS: () => 30,
});

const shell = fakeSpec('shell', z.strictObject({ command: z.string(), stdin: z.optional(z.unknown()), timeout_s: z.optional(z.number()) }), [
  'stdout',
  'stderr',
  'exit_code',
]);
const http = fakeSpec(
  'http',
  z.strictObject({
    url: z.string({ error: 'url is required: the address to call' }),
    headers: z.optional(z.record(z.string(), z.string())),
    method: z._default(z.enum(['GET', 'POST']), 'GET'),
  }),
  ['status_code', 'headers', 'response'],
);
const mcp = fakeSpec('mcp-tool', z.looseObject({ server: z.string() }), ['result']);
const catalog = makeCatalog([shell, http, mcp]);

function parse(raw: WorkflowInput) {
  const parsed = parseWorkflow(raw);
  if (!parsed.ok) throw new Error(`fixture does not parse: ${formatIssues(parsed.issues)}`);
  return parsed.workflow;
}

const validate = (raw: WorkflowInput): ValidationIssue[] => validateWorkflow(parse(raw), catalog);

/** a -> b -> c, a chain of shell nodes, for tests to change one thing in. */
const chain = (overrides: Partial<WorkflowInput> = {}): WorkflowInput => ({
  inputs: { name: { type: 'string', default: 'world' } },
  nodes: [
    { id: 'a', type: 'shell', params: { command: 'echo ${name}' } },
    { id: 'b', type: 'shell', params: { command: 'tr a-z A-Z', stdin: '${a.stdout}' } },
    { id: 'c', type: 'shell', params: { command: 'wc -c', stdin: '${b.stdout}' } },
  ],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
  ],
  outputs: { loud: { source: '${b.stdout}' } },
  ...overrides,
});

/** The chain with node `index` replaced. */
const withNode = (index: number, node: WorkflowInput['nodes'][number]): WorkflowInput => {
  const nodes = [...chain().nodes];
  nodes[index] = node;
  return chain({ nodes });
};

/** A workflow of one node with the `name` input. */
const single = (node: WorkflowInput['nodes'][number]): WorkflowInput => chain({ nodes: [node], edges: [], outputs: {} });

const codes = (issues: ValidationIssue[]): string[] => issues.map((i) => i.code);

describe('parseWorkflow', () => {
  it('parses a valid workflow and fills defaults', () => {
    const parsed = parseWorkflow({ nodes: [{ id: 'a', type: 'shell', params: { command: 'true' } }] });
    expect(parsed.ok && parsed.workflow).toMatchObject({ ir_version: '0.1.0', edges: [], inputs: {}, outputs: {} });
  });

  it.each<[string, unknown, Partial<ValidationIssue>[]]>([
    [
      'unknown node key, hint params',
      { nodes: [{ id: 'a', type: 'shell', parameters: {} }] },
      [
        {
          path: 'nodes[0].parameters',
          code: 'UNKNOWN_KEY',
          hint: expect.stringMatching(
            /^Did you mean 'params'\? Valid keys: id, type, purpose, params, side_effects, batch, approval, loop, retry, cache, prompt_cache, prewarm, concurrency, rate_limit$/,
          ),
        },
      ],
    ],
    [
      'unknown top-level key',
      { nodes: [{ id: 'a', type: 'shell' }], start_nod: 'a' },
      [
        {
          path: 'start_nod',
          code: 'UNKNOWN_KEY',
          message: "Unknown key 'start_nod' at the top level of the workflow",
          hint: expect.stringMatching(/^Did you mean 'start_node'\?/),
        },
      ],
    ],
    [
      'output "value" means source',
      { nodes: [{ id: 'a', type: 'shell' }], outputs: { o: { value: '${a.stdout}' } } },
      [{ path: 'outputs.o.value', code: 'UNKNOWN_KEY', hint: expect.stringMatching(/^Did you mean 'source'\?/) }],
    ],
    [
      'output "from" means source',
      { nodes: [{ id: 'a', type: 'shell' }], outputs: { o: { source: '${a.stdout}', from: 'a' } } },
      [{ path: 'outputs.o.from', hint: expect.stringMatching(/^Did you mean 'source'\?/) }],
    ],
    [
      'edge key typo',
      { nodes: [{ id: 'a', type: 'shell' }], edges: [{ from: 'a', to: 'a', actoin: 'x' }] },
      [{ path: 'edges[0].actoin', hint: expect.stringMatching(/^Did you mean 'action'\?/) }],
    ],
    [
      'input key typo',
      { inputs: { n: { requird: true } }, nodes: [{ id: 'a', type: 'shell' }] },
      [{ path: 'inputs.n.requird', hint: expect.stringMatching(/^Did you mean 'required'\?/) }],
    ],
    [
      'bad enum value, hint closest',
      { inputs: { n: { type: 'strng' } }, nodes: [{ id: 'a', type: 'shell' }] },
      [
        {
          path: 'inputs.n.type',
          code: 'INVALID_VALUE',
          message: `'inputs.n.type' cannot be "strng"`,
          hint: expect.stringMatching(/^Did you mean 'string'\? Valid values: string, number/),
        },
      ],
    ],
    [
      'wrong type',
      { ir_version: 1, nodes: [{ id: 'a', type: 'shell' }] },
      [{ path: 'ir_version', code: 'INVALID_TYPE', message: "'ir_version' must be a string, not number 1" }],
    ],
    [
      'missing node id',
      { nodes: [{ type: 'shell' }] },
      [{ path: 'nodes[0].id', code: 'MISSING_FIELD', message: "'nodes[0].id' is missing", hint: "Add 'nodes[0].id' (string)" }],
    ],
    [
      'bad node id uses the schema message',
      { nodes: [{ id: '1a', type: 'shell' }] },
      [{ path: 'nodes[0].id', code: 'INVALID_INVALID_FORMAT', message: expect.stringContaining('a node id starts with a letter') }],
    ],
    ['no nodes', { nodes: [] }, [{ path: 'nodes', message: expect.stringContaining('a workflow needs at least one node') }]],
    ['not an object', [], [{ path: '', code: 'INVALID_TYPE', message: 'the workflow must be an object, not an array' }]],
    [
      'missing edge end',
      { nodes: [{ id: 'a', type: 'shell' }], edges: [{ from: 'a' }] },
      [{ path: 'edges[0].to', code: 'MISSING_FIELD', message: 'an edge needs "to", a node id' }],
    ],
  ])('%s', (_name, raw, expected) => {
    const parsed = parseWorkflow(raw);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues).toHaveLength(expected.length);
    expected.forEach((want, i) => {
      expect(parsed.issues[i]).toMatchObject({ severity: 'error', ...want });
    });
  });

  it('accepts pflow source/target edges', () => {
    const parsed = parseWorkflow({
      nodes: [
        { id: 'a', type: 'shell' },
        { id: 'b', type: 'shell' },
      ],
      edges: [{ source: 'a', target: 'b' }],
    });
    expect(parsed.ok && parsed.workflow.edges).toEqual([{ from: 'a', to: 'b', action: 'default' }]);
  });
});

describe('validateWorkflow', () => {
  it('finds nothing wrong with a sound workflow', () => {
    expect(validate(chain())).toEqual([]);
  });

  it.each<[string, WorkflowInput, Partial<ValidationIssue>]>([
    [
      'duplicate node id',
      chain({ nodes: [...chain().nodes, { id: 'a', type: 'shell', params: { command: 'x' } }] }),
      { code: 'DUPLICATE_NODE_ID', path: 'nodes[3].id' },
    ],
    ['unknown start node', chain({ start_node: 'bb' }), { code: 'UNKNOWN_START_NODE', path: 'start_node', hint: "Did you mean 'b'? Nodes: a, b, c" }],
    [
      'edge to an unknown node',
      chain({
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'c', to: 'bb' },
        ],
      }),
      { code: 'EDGE_UNKNOWN_NODE', path: 'edges[2].to', hint: "Did you mean 'b'? Nodes: a, b, c" },
    ],
    [
      'edge from an unknown node',
      chain({
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'x', to: 'c' },
        ],
      }),
      { code: 'EDGE_UNKNOWN_NODE', path: 'edges[2].from' },
    ],
    [
      'two edges with one action',
      chain({
        edges: [
          { from: 'a', to: 'b' },
          { from: 'b', to: 'c' },
          { from: 'a', to: 'c', action: 'default' },
        ],
      }),
      { code: 'AMBIGUOUS_EDGE', path: 'edges[2].action', message: "Node 'a' has two 'default' edges (edges[0] and edges[2]); an action must lead to one node" },
    ],
    [
      'unknown node type',
      withNode(0, { id: 'a', type: 'shel', params: { command: 'x' } }),
      { code: 'UNKNOWN_NODE_TYPE', path: 'nodes[0].type', hint: "Did you mean 'shell'? Known types: shell, http, mcp-tool" },
    ],
    [
      'unknown param',
      single({ id: 'a', type: 'shell', params: { command: 'x', comand: 'x' } }),
      { code: 'UNKNOWN_PARAM', path: 'nodes[0].params.comand', hint: "Did you mean 'command'? Params of shell: command, stdin, timeout_s" },
    ],
    [
      'missing required param',
      single({ id: 'a', type: 'shell', params: {} }),
      { code: 'MISSING_PARAM', path: 'nodes[0].params.command', message: "Node 'a' (shell): missing required param 'command'" },
    ],
    [
      'param of the wrong type',
      single({ id: 'a', type: 'shell', params: { command: 'x', timeout_s: '5' } }),
      { code: 'INVALID_PARAM', path: 'nodes[0].params.timeout_s', message: "Node 'a' param 'timeout_s': expected number, received string" },
    ],
    [
      'unknown template root',
      single({ id: 'a', type: 'shell', params: { command: 'echo ${nme}' } }),
      {
        code: 'TEMPLATE_UNKNOWN_ROOT',
        path: 'nodes[0].params.command',
        message: "Node 'a' param 'command': ${nme} — 'nme' is neither a workflow input nor a node id",
        hint: 'Did you mean ${name}? Inputs: name. Nodes: a',
      },
    ],
    [
      'undeclared input',
      single({ id: 'a', type: 'shell', params: { command: 'echo ${zzz}' } }),
      { code: 'TEMPLATE_UNKNOWN_ROOT', hint: `Declare 'zzz' under "inputs", or use one of them. Inputs: name. Nodes: a` },
    ],
    [
      'unknown output key',
      chain({
        nodes: [
          { id: 'a', type: 'shell', params: { command: 'x' } },
          { id: 'b', type: 'shell', params: { command: 'cat ${a.stdot}' } },
        ],
        edges: [{ from: 'a', to: 'b' }],
        outputs: {},
      }),
      {
        code: 'TEMPLATE_UNKNOWN_OUTPUT',
        path: 'nodes[1].params.command',
        message: "Node 'b' param 'command': ${a.stdot} — node 'a' (shell) has no output 'stdot'",
        hint: "Did you mean ${a.stdout}? Outputs of 'a': stdout, stderr, exit_code",
      },
    ],
    [
      'index instead of output key',
      chain({ outputs: { o: { source: '${a[0]}' } } }),
      { code: 'TEMPLATE_UNKNOWN_OUTPUT', path: 'outputs.o.source', message: "Output 'o': ${a[0]} — node 'a' (shell) has no output [0]" },
    ],
    [
      'reference to a node that runs later',
      chain({ nodes: [{ id: 'a', type: 'shell', params: { command: 'echo ${c.stdout}' } }, ...chain().nodes.slice(1)] }),
      {
        code: 'TEMPLATE_NOT_UPSTREAM',
        path: 'nodes[0].params.command',
        message: "Node 'a' param 'command': ${c.stdout} — node 'c' does not run before 'a' (no path of edges leads from 'c' to 'a')",
      },
    ],
    [
      'reference to a sibling branch',
      chain({
        edges: [
          { from: 'a', to: 'b' },
          { from: 'a', to: 'c', action: 'error' },
        ],
        nodes: [...chain().nodes.slice(0, 2), { id: 'c', type: 'shell', params: { command: 'x ${b.stdout}' } }],
      }),
      { code: 'TEMPLATE_NOT_UPSTREAM', hint: "Add edges so that 'b' runs before 'c', or use a node that does: a" },
    ],
    [
      'self reference',
      single({ id: 'a', type: 'shell', params: { command: 'echo ${a.stdout}' } }),
      { code: 'TEMPLATE_SELF_REFERENCE', path: 'nodes[0].params.command' },
    ],
    ['output source naming an unknown node', chain({ outputs: { o: { source: '${d.stdout}' } } }), { code: 'TEMPLATE_UNKNOWN_ROOT', path: 'outputs.o.source' }],
    [
      'output source with an unknown key',
      chain({ outputs: { o: { source: 'got ${c.stdout.x} ${c.exitcode}' } } }),
      { code: 'TEMPLATE_UNKNOWN_OUTPUT', path: 'outputs.o.source', hint: "Did you mean ${c.exit_code}? Outputs of 'c': stdout, stderr, exit_code" },
    ],
    [
      'input named like a node',
      chain({ inputs: { name: { required: false }, a: { type: 'string', required: false } } }),
      { code: 'INPUT_NODE_NAME_CLASH', path: 'inputs.a', severity: 'error' },
    ],
    [
      'required input with a default',
      chain({ inputs: { name: { required: true, default: 'x' } } }),
      { code: 'REQUIRED_INPUT_WITH_DEFAULT', path: 'inputs.name', severity: 'warning' },
    ],
    [
      'unreachable node',
      chain({ edges: [{ from: 'a', to: 'b' }], nodes: [...chain().nodes.slice(0, 2), { id: 'c', type: 'shell', params: { command: 'x' } }] }),
      { code: 'UNREACHABLE_NODE', path: 'nodes[2]', severity: 'warning' },
    ],
  ])('reports %s', (_name, raw, expected) => {
    const issues = validate(raw);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ severity: 'error', ...expected });
  });

  it('reports templates in deep param values once per template', () => {
    const issues = validate(
      chain({ nodes: [{ id: 'a', type: 'mcp-tool', params: { server: 's', args: { x: ['${nope}', '${nope} ${nope2}'] } } }], edges: [], outputs: {} }),
    );
    expect(issues.map((i) => i.message)).toEqual([
      "Node 'a' param 'args': ${nope} — 'nope' is neither a workflow input nor a node id",
      "Node 'a' param 'args': ${nope2} — 'nope2' is neither a workflow input nor a node id",
    ]);
  });

  it.each<[string, unknown]>([
    ['deeper path below a declared output', 'x ${a.stdout.items[0].name}'],
    ['whole node outputs', '${a}'],
    ['an input', '${name}'],
    ['an escaped template', '$${zzz.nope}'],
    ['text that only looks like a template', '${HOME:-x} ${1}'],
  ])('accepts %s', (_name, stdin) => {
    expect(
      validate(
        chain({
          nodes: [chain().nodes[0] as never, { id: 'b', type: 'shell', params: { command: 'cat', stdin } }],
          edges: [{ from: 'a', to: 'b' }],
          outputs: {},
        }),
      ),
    ).toEqual([]);
  });

  it('counts a node in a loop with the referencing node as upstream, both ways', () => {
    const loop = chain({
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'echo ${c.stdout}' } },
        { id: 'b', type: 'shell', params: { command: 'x', stdin: '${a.stdout}' } },
        { id: 'c', type: 'shell', params: { command: 'x', stdin: '${b.stdout}' } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
        { from: 'c', to: 'a', action: 'retry' },
      ],
    });
    expect(validate(loop)).toEqual([]);
  });

  it('skips type checks of params holding templates and output checks of unknown types', () => {
    expect(validate(chain({ nodes: [{ id: 'a', type: 'shell', params: { command: '${name}', timeout_s: '${name}' } }], edges: [], outputs: {} }))).toEqual([]);
    const unknownType = validate(
      chain({
        nodes: [
          { id: 'a', type: 'nope', params: {} },
          { id: 'b', type: 'shell', params: { command: '${a.whatever}' } },
        ],
        edges: [{ from: 'a', to: 'b' }],
        outputs: {},
      }),
    );
    expect(codes(unknownType)).toEqual(['UNKNOWN_NODE_TYPE']);
  });

  it('names the path inside a param that fails its type, and uses the schema message for a missing param', () => {
    const issues = validate(chain({ nodes: [{ id: 'f', type: 'http', params: { headers: { a: 1 }, method: 'PUT' } }], edges: [], outputs: {} }));
    expect(issues.map((i) => [i.code, i.path])).toEqual([
      ['INVALID_PARAM', 'nodes[0].params.headers.a'],
      ['INVALID_PARAM', 'nodes[0].params.method'],
      ['MISSING_PARAM', 'nodes[0].params.url'],
    ]);
    expect(issues[2]?.hint).toBe('url is required: the address to call');
  });

  it('accepts any param name for a node type whose schema takes unknown keys', () => {
    expect(validate(chain({ nodes: [{ id: 'a', type: 'mcp-tool', params: { server: 's', channel: 'c' } }], edges: [], outputs: {} }))).toEqual([]);
  });

  it('reports every problem of a broken workflow at once', () => {
    const broken = chain({
      start_node: 'b',
      inputs: { name: { required: true, default: 'x' } },
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'echo ${nme}' } },
        { id: 'b', type: 'http', params: { url: '${a.stdout}' } },
        { id: 'b', type: 'shell', params: { command: 'x' } },
      ],
      edges: [{ from: 'b', to: 'zz' }],
      outputs: { o: { source: '${b.respons}' } },
    });
    expect(codes(validate(broken)).sort()).toEqual(
      [
        'DUPLICATE_NODE_ID',
        'EDGE_UNKNOWN_NODE',
        'REQUIRED_INPUT_WITH_DEFAULT',
        'TEMPLATE_NOT_UPSTREAM',
        'TEMPLATE_UNKNOWN_OUTPUT',
        'TEMPLATE_UNKNOWN_ROOT',
        'UNREACHABLE_NODE',
      ].sort(),
    );
  });
});

describe('formatIssues and helpers', () => {
  it('prints one block per issue with its place, code and hint, then a count', () => {
    const text = formatIssues([
      {
        path: 'nodes[1].params.command',
        code: 'TEMPLATE_UNKNOWN_OUTPUT',
        message: "Node 'b' param 'command': ${a.stdot}",
        hint: 'Did you mean ${a.stdout}?',
        severity: 'error',
      },
      { path: 'nodes[2]', code: 'UNREACHABLE_NODE', message: "Node 'c' cannot be reached", severity: 'warning' },
    ]);
    expect(text).toBe(
      [
        "✗ error: Node 'b' param 'command': ${a.stdot}",
        '    at nodes[1].params.command [TEMPLATE_UNKNOWN_OUTPUT]',
        '    hint: Did you mean ${a.stdout}?',
        "⚠ warning: Node 'c' cannot be reached",
        '    at nodes[2] [UNREACHABLE_NODE]',
        '1 error, 1 warning',
      ].join('\n'),
    );
    expect(formatIssues([])).toBe('No issues.');
  });

  it('hasErrors ignores warnings', () => {
    expect(hasErrors([{ path: '', code: 'X', message: '', severity: 'warning' }])).toBe(false);
    expect(hasErrors([{ path: '', code: 'X', message: '', severity: 'error' }])).toBe(true);
  });

  it('re-exports closestMatch', () => {
    expect(closestMatch('stdot', ['stdout'])).toBe('stdout');
  });
});

describe("batch (pflow's batch on a node)", () => {
  const batchNode = (batch: unknown, params: Record<string, unknown> = { command: 'echo ${item}' }) => ({ nodes: [{ id: 'a', type: 'shell', batch, params }] });

  it("parses pflow's batch config, with its defaults", () => {
    const parsed = parseWorkflow(batchNode({ items: [1, 2] }));
    expect(parsed.ok && parsed.workflow.nodes[0]?.batch).toEqual({
      items: [1, 2],
      as: 'item',
      parallel: false,
      max_concurrent: 10,
      error_handling: 'fail_fast',
      max_retries: 1,
      retry_wait: 0,
    });
  });

  it.each([
    [
      'max_concurrent over 100',
      { items: [1], max_concurrent: 500 },
      { path: 'nodes[0].batch.max_concurrent', message: expect.stringContaining('batch.max_concurrent is 1-100') },
    ],
    [
      'an unknown key, with the closest',
      { items: [1], concurrency: 3 },
      { path: 'nodes[0].batch.concurrency', code: 'UNKNOWN_KEY', hint: expect.stringMatching(/^Did you mean 'max_concurrent'\?/) },
    ],
    ['items that are neither a template nor an array', { items: 'a,b' }, { path: 'nodes[0].batch.items', message: expect.stringContaining('one template') }],
    ['an empty literal array', { items: [] }, { path: 'nodes[0].batch.items', message: expect.stringContaining('at least one item') }],
    ['a bad error_handling', { items: [1], error_handling: 'ignore' }, { path: 'nodes[0].batch.error_handling', code: 'INVALID_VALUE' }],
    ['as named __index__', { items: [1], as: '__index__' }, { path: 'nodes[0].batch.as', message: expect.stringContaining("cannot be '__index__'") }],
  ])('refuses %s, naming the field', (_name, batch, issue) => {
    const parsed = parseWorkflow(batchNode(batch));
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.issues).toEqual([expect.objectContaining(issue)]);
  });

  it('knows the item (its `as` name) and __index__ in the batch node only, and the batch outputs of the node', () => {
    const ok = parseWorkflow({
      nodes: [
        { id: 'a', type: 'shell', batch: { items: [1, 2], as: 'n' }, params: { command: 'echo ${n} ${__index__}' } },
        { id: 'b', type: 'shell', batch: { items: '${a.results}' }, params: { command: 'echo ${a.results[${__index__}].stdout} ${item.stdout}' } },
        { id: 'c', type: 'shell', params: { command: 'echo ${b.count} ${b.errors} ${item} ${a.stdout}' } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ],
    });
    if (!ok.ok) throw new Error('does not parse');
    const issues = validateWorkflow(ok.workflow, builtinCatalog).filter((i) => i.severity === 'error');
    expect(issues.map((i) => `${i.code} ${i.path}: ${i.message.split(' — ')[0]}`)).toEqual([
      "TEMPLATE_UNKNOWN_ROOT nodes[2].params.command: Node 'c' param 'command': ${item}",
      "TEMPLATE_UNKNOWN_OUTPUT nodes[2].params.command: Node 'c' param 'command': ${a.stdout}",
    ]);
    expect(issues[1]?.hint).toContain('results, count, success_count, error_count, errors');
  });

  it('accepts a batch on a workflow node, its item in param_mapping (each item is a child run)', () => {
    const child = { inputs: { n: { type: 'number', required: true } }, nodes: [{ id: 'x', type: 'shell', params: { command: 'echo ${n}' } }] };
    const parsed = parseWorkflow({
      nodes: [{ id: 'w', type: 'workflow', batch: { items: [1, 2] }, params: { workflow_ir: child, param_mapping: { n: '${item}', m: '${itme}' } } }],
    });
    if (!parsed.ok) throw new Error('does not parse');
    const issues = validateWorkflow(parsed.workflow, builtinCatalog).filter((i) => i.severity === 'error');
    // Only the typo: the item is a name the batch binds, the child's unknown input is named.
    expect(issues.map((i) => i.code).sort()).toEqual(['PARAM_MAPPING_UNKNOWN_INPUT', 'TEMPLATE_UNKNOWN_ROOT']);
  });

  it("reads pflow's `approval: required` on a node, refuses any other value, and refuses a gate on a batch node", () => {
    const wrong = parseWorkflow({ nodes: [{ id: 'a', type: 'shell', approval: 'yes', params: { command: 'true' } }] });
    expect(wrong.ok).toBe(false);
    if (!wrong.ok) expect(wrong.issues).toEqual([expect.objectContaining({ path: 'nodes[0].approval', hint: 'Valid values: required' })]);
    const batched = parseWorkflow({ nodes: [{ id: 'a', type: 'shell', approval: 'required', batch: { items: [1] }, params: { command: 'true' } }] });
    if (!batched.ok) throw new Error('does not parse');
    expect(batched.workflow.nodes[0]?.approval).toBe('required');
    const issues = validateWorkflow(batched.workflow, builtinCatalog).filter((i) => i.severity === 'error');
    expect(issues).toEqual([expect.objectContaining({ path: 'nodes[0].approval', code: 'APPROVAL_ON_BATCH' })]);
  });
});
