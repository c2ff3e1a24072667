import { describe, expect, it } from 'vitest';
import { prepareInputs } from '../../functions/core/inputs.ts';
import { parseWorkflow, validateWorkflow } from '../../functions/core/validate.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

// What pflow's IR gained in 2026 (issue 29), as parsing and validation see it.
const parsed = (raw: unknown) => {
  const result = parseWorkflow(raw);
  if (!result.ok) throw new Error(JSON.stringify(result.issues));
  return result.workflow;
};
const errors = (raw: unknown) =>
  validateWorkflow(parsed(raw), builtinCatalog)
    .filter((i) => i.severity === 'error')
    .map((i) => `${i.code} ${i.path}`);
const shell = (id: string, extra: Record<string, unknown> = {}) => ({ id, type: 'shell', params: { command: 'echo' }, ...extra });

describe("pflow's 2026 IR", () => {
  it("drops the parser's _source* metadata from nodes, outputs and the cache, and accepts the new input types", () => {
    const workflow = parsed({
      ir_version: '0.1.0',
      inputs: { n: { type: 'integer' }, anything: { type: 'any', required: false } },
      nodes: [{ ...shell('a'), _source_line: 4, _source_lines: { command: 9 }, _source_files: {}, _routes_to_end: true }],
      outputs: { out: { source: '${a.stdout}', stdout: true, _source_line: 20 } },
    });
    expect(workflow.nodes[0]).toEqual({ id: 'a', type: 'shell', params: { command: 'echo' } });
    expect(workflow.outputs).toEqual({ out: { source: '${a.stdout}', stdout: true } });
    expect(prepareInputs(workflow, { n: '3', anything: '{"raw": true}' })).toEqual({ ok: true, params: { n: 3, anything: '{"raw": true}' } });
    expect(prepareInputs(workflow, { n: '3.5' })).toMatchObject({ ok: false, problems: [{ message: expect.stringContaining('integer') }] });
  });

  it('reads the nested form `workflow:` + `inputs:` as a file ref (a path or a template) or a registered name, with the inputs as param_mapping', () => {
    const workflow = parsed({
      nodes: [
        { id: 'file', type: 'workflow', params: { workflow: './child.pflow.md', inputs: { text: '${title}' } } },
        { id: 'named', type: 'workflow', params: { workflow: 'saved-child' } },
        { id: 'dynamic', type: 'workflow', params: { workflow: '${item.workflow}' } },
      ],
    });
    expect(workflow.nodes.map((n) => n.params)).toEqual([
      { workflow_ref: './child.pflow.md', param_mapping: { text: '${title}' } },
      { workflow_name: 'saved-child' },
      // A template names files (a batch's items say which one): the loader resolves it (nested/templated-ref.ts).
      { workflow_ref: '${item.workflow}' },
    ]);
  });

  it('refuses the reserved ids end and __end__', () => {
    const result = parseWorkflow({ nodes: [shell('end')] });
    expect(result).toMatchObject({ ok: false, issues: [{ path: 'nodes[0].id', message: expect.stringContaining('reserved') }] });
    expect(parseWorkflow({ nodes: [shell('__end__')] }).ok).toBe(false);
  });

  it('checks the node settings: loop xor batch, exactly one of while/until, retry bounds', () => {
    expect(parseWorkflow({ nodes: [shell('a', { loop: { while: '${a.stdout}', until: '${a.stdout}' } })] })).toMatchObject({
      ok: false,
      issues: [{ message: expect.stringContaining('exactly one of "while"') }],
    });
    expect(parseWorkflow({ nodes: [shell('a', { retry: { max: 11 } })] })).toMatchObject({ ok: false, issues: [{ message: expect.stringContaining('1-10') }] });
    expect(parsed({ nodes: [shell('a', { retry: { max: 3 } })] }).nodes[0]?.retry).toEqual({ max: 3, wait: 1, backoff: 'fixed' });
    expect(errors({ nodes: [shell('a', { loop: { while: '${a.stdout}' }, batch: { items: [1] } })] })).toContain('LOOP_WITH_BATCH nodes[0].loop');
  });

  it('allows one stdin input and one stdout output, and prompt_cache on llm nodes only', () => {
    expect(
      errors({
        inputs: { a: { type: 'string', stdin: true }, b: { type: 'string', stdin: true } },
        nodes: [shell('n', { prompt_cache: ['x'] })],
        outputs: { x: { source: '${n.stdout}', stdout: true }, y: { source: '${n.stdout}', stdout: true } },
      }),
    ).toEqual(expect.arrayContaining(['MULTIPLE_STDIN inputs.b.stdin', 'MULTIPLE_STDOUT outputs.y.stdout', 'PROMPT_CACHE_NOT_LLM nodes[0].prompt_cache']));
  });

  it("refuses pflow's agent and claude-code nodes, saying what to use instead", () => {
    const issues = validateWorkflow(parsed({ nodes: [{ id: 'a', type: 'agent', params: { backend: 'claude' } }] }), builtinCatalog);
    expect(issues).toContainEqual(
      expect.objectContaining({ code: 'UNSUPPORTED_NODE_TYPE', message: expect.stringMatching(/agent node .*not supported.*llm node.*codex exec/) }),
    );
    expect(validateWorkflow(parsed({ nodes: [{ id: 'a', type: 'claude-code' }] }), builtinCatalog)[0]?.message).toContain('claude -p');
  });
});
