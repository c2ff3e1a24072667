import { describe, expect, it } from 'vitest';
import { applyRules, fixTemplateAtRuntime, type RepairFailure } from '../../../functions/core/repair/index.ts';
import { validateWorkflow } from '../../../functions/core/validate.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';
import { context, done, runtime, templateError, wf } from './support.ts';

const twoShells = (command: string) =>
  wf({
    nodes: [
      { id: 'a', type: 'shell', params: { command: 'echo hi' } },
      { id: 'b', type: 'shell', params: { command } },
    ],
    edges: [{ from: 'a', to: 'b' }],
  });

const staticFailure = (workflow: ReturnType<typeof wf>): RepairFailure => ({
  kind: 'static',
  issues: validateWorkflow(workflow, builtinCatalog).filter((i) => i.severity === 'error'),
});

describe('fixTemplateAtRuntime', () => {
  const ctx = {
    inputs: { user: 'ann' },
    nodes: {
      a: { stdout: 'hi', stderr: '', exit_code: 0 },
      fetch: { status_code: 200, response: { data: { login: 'octo', id: 7 } }, headers: {} },
      flat: { response: { login: 'octo' } },
      list: { response: { items: [{ title: 't' }] } },
      text: { stdout: '{"user":{"name":"ann"}}' },
    },
  };

  it('fixes a typo in an output key', () => expect(fixTemplateAtRuntime('a.stdot', ctx)).toBe('a.stdout'));
  it('fixes a wrong case', () => expect(fixTemplateAtRuntime('a.STDOUT', ctx)).toBe('a.stdout'));
  it('fixes a typo in the node id', () => expect(fixTemplateAtRuntime('fetsh.status_code', ctx)).toBe('fetch.status_code'));
  it('goes one level deeper', () => expect(fixTemplateAtRuntime('fetch.response.login', ctx)).toBe('fetch.response.data.login'));
  it('goes one level shallower', () => expect(fixTemplateAtRuntime('flat.response.data.login', ctx)).toBe('flat.response.login'));
  it('goes into the first item of an array', () => expect(fixTemplateAtRuntime('list.response.items.title', ctx)).toBe('list.response.items[0].title'));
  it('goes through JSON held in a string', () => expect(fixTemplateAtRuntime('text.stdout.user.nme', ctx)).toBe('text.stdout.user.name'));
  it('finds nothing for a key that is nowhere near', () => expect(fixTemplateAtRuntime('fetch.response.zzzqqq', ctx)).toBeUndefined());
  it('refuses a tie between two equally close keys', () => {
    expect(fixTemplateAtRuntime('n.ab', { inputs: {}, nodes: { n: { ac: 1, ad: 2 } } })).toBeUndefined();
  });
  it('refuses a tie between two deeper paths', () => {
    expect(fixTemplateAtRuntime('n.name', { inputs: {}, nodes: { n: { a: { name: 1 }, b: { name: 2 } } } })).toBeUndefined();
  });
  it('never drops the last segment', () => expect(fixTemplateAtRuntime('a.stdout.text', ctx)).toBeUndefined());
});

describe('applyRules at run time', () => {
  it('rewrites an unresolved template in the failed node and says what it changed', () => {
    const workflow = twoShells('echo ${a.stdot} and ${a.stdot}');
    const fix = applyRules(context(workflow, runtime(templateError('b', ['${a.stdot}'])), [done('a', { stdout: 'hi', stderr: '', exit_code: 0 })]));
    expect(fix?.ir.nodes[1]?.params).toEqual({ command: 'echo ${a.stdout} and ${a.stdout}' });
    expect(fix?.edits.map((e) => `${e.path}: ${e.before} -> ${e.after}`)).toEqual(['nodes[1].params.command: ${a.stdot} -> ${a.stdout}']);
  });

  it('keeps an escaped $${...} literal as it is', () => {
    const workflow = twoShells('echo $${a.stdot} ${a.stdot}');
    const fix = applyRules(context(workflow, runtime(templateError('b', ['${a.stdot}'])), [done('a', { stdout: 'hi' })]));
    expect(fix?.ir.nodes[1]?.params.command).toBe('echo $${a.stdot} ${a.stdout}');
  });

  it('finds the unresolved templates itself when the error does not list them', () => {
    const workflow = twoShells('echo ${a.Stdout}');
    const error = { ...templateError('b', []), details: {} };
    const fix = applyRules(context(workflow, runtime(error), [done('a', { stdout: 'hi' })]));
    expect(fix?.ir.nodes[1]?.params.command).toBe('echo ${a.stdout}');
  });

  it('gives up when one of several templates has no unambiguous fix', () => {
    const workflow = twoShells('echo ${a.stdot} ${a.qqqqqq}');
    expect(applyRules(context(workflow, runtime(templateError('b', ['${a.stdot}', '${a.qqqqqq}'])), [done('a', { stdout: 'hi' })]))).toBeUndefined();
  });

  it('renames a typo in a param name for PARAMS_INVALID', () => {
    const workflow = wf({ nodes: [{ id: 'a', type: 'shell', params: { comand: 'echo hi', timeout_s: 5 } }] });
    const error = { node_id: 'a', category: 'execution_failure' as const, code: 'PARAMS_INVALID', message: 'unknown param "comand"', fixable: true };
    const fix = applyRules(context(workflow, runtime(error)));
    expect(fix?.ir.nodes[0]?.params).toEqual({ command: 'echo hi', timeout_s: 5 });
  });

  it('does nothing for an error no rule covers', () => {
    const workflow = twoShells('exit 3');
    const error = { node_id: 'b', category: 'execution_failure' as const, code: 'EXIT_NONZERO', message: 'exit 3', fixable: true };
    expect(applyRules(context(workflow, runtime(error), [done('a', { stdout: 'hi' })]))).toBeUndefined();
  });
});

describe('applyRules before the run (static issues)', () => {
  it('fixes an output key against the declared keys of the node type', () => {
    const workflow = twoShells('echo ${a.stdot}');
    const fix = applyRules(context(workflow, staticFailure(workflow)));
    expect(fix?.ir.nodes[1]?.params.command).toBe('echo ${a.stdout}');
    if (!fix) throw new Error('the rules found no fix');
    expect(validateWorkflow(fix.ir, builtinCatalog).filter((i) => i.severity === 'error')).toEqual([]);
  });

  it('fixes a param name, an edge end, a node type and an output source in one pass', () => {
    const workflow = wf({
      nodes: [
        { id: 'fetch', type: 'shel', params: { command: 'echo 1' } },
        { id: 'process', type: 'shell', params: { comand: 'cat', stdin: '${fetch.stdout}' } },
      ],
      edges: [{ from: 'fetch', to: 'proces' }],
      outputs: { out: { source: '${process.Stdout}' } },
    });
    const fix = applyRules(context(workflow, staticFailure(workflow)));
    expect(fix?.ir).toMatchObject({
      nodes: [{ type: 'shell' }, { params: { command: 'cat', stdin: '${fetch.stdout}' } }],
      edges: [{ from: 'fetch', to: 'process' }],
      outputs: { out: { source: '${process.stdout}' } },
    });
    expect(fix?.edits.map((e) => e.path)).toEqual(['nodes[0].type', 'edges[0].to', 'nodes[1].params', 'outputs.out.source']);
  });

  it('leaves an ambiguous edge end alone', () => {
    const workflow = wf({
      nodes: [
        { id: 'a', type: 'shell', params: { command: 'x' } },
        { id: 'b1', type: 'shell', params: { command: 'x' } },
        { id: 'b2', type: 'shell', params: { command: 'x' } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'b2' },
      ],
    });
    expect(applyRules(context(workflow, staticFailure(workflow)))).toBeUndefined();
  });
});
