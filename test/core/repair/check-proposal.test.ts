import { describe, expect, it } from 'vitest';
import type { Workflow } from '../../../functions/core/ir.ts';
import { type CompletedNode, checkProposal } from '../../../functions/core/repair/index.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';
import { done, wf } from './support.ts';

/** fetch (shell, side effects) -> shape (transform, pure) -> notify (shell, side effects) -> report (shell, failed). */
const pipeline = wf({
  description: 'notify about data',
  inputs: { who: { type: 'string', default: 'ann' } },
  nodes: [
    { id: 'fetch', type: 'shell', params: { command: 'echo 1', timeout_s: 5 } },
    { id: 'shape', type: 'transform', params: { expression: '$ * 2', input: '${fetch.stdout}' } },
    { id: 'notify', type: 'shell', params: { command: 'echo ${shape.result}' } },
    { id: 'report', type: 'shell', params: { command: 'exit 3' } },
  ],
  edges: [
    { from: 'fetch', to: 'shape' },
    { from: 'shape', to: 'notify' },
    { from: 'notify', to: 'report' },
  ],
  outputs: { out: { source: '${report.stdout}' } },
});

const completed: CompletedNode[] = [
  done('fetch', { stdout: '1', stderr: '', exit_code: 0 }),
  done('shape', { result: 2 }, 'transform', false),
  done('notify', { stdout: '2', stderr: '', exit_code: 0 }),
];

const edit = (change: (w: Workflow) => void): Workflow => {
  const copy = structuredClone(pipeline);
  change(copy);
  return copy;
};

const check = (proposal: unknown, reason = 'Fixed report.', options: { completed?: CompletedNode[]; keep?: boolean } = {}) =>
  checkProposal({
    before: pipeline,
    proposal,
    completed: options.completed ?? completed,
    catalog: builtinCatalog,
    ...(options.keep === false ? {} : { keepUnchanged: { reason } }),
  });

const problems = (result: ReturnType<typeof check>): string[] => (result.ok ? [] : result.problems);

describe('checkProposal', () => {
  it('accepts a fix of the failed node', () => {
    const result = check(
      edit((w) => {
        (w.nodes[3] as Workflow['nodes'][number]).params.command = 'echo ok';
      }),
    );
    expect(result.ok).toBe(true);
  });

  it('refuses a proposal that changes nothing', () => {
    expect(problems(check(structuredClone(pipeline)))).toEqual(['the proposal changes nothing']);
  });

  it('refuses a proposal that does not parse as a workflow', () => {
    expect(problems(check({ nodes: [] }))[0]).toMatch(/^invalid workflow: nodes/);
  });

  it('refuses a proposal that fails validation', () => {
    const result = check(
      edit((w) => {
        (w.nodes[3] as Workflow['nodes'][number]).params.command = 'echo ${nowhere.stdout}';
      }),
    );
    expect(problems(result).join('\n')).toMatch(/validation: .*nowhere/);
  });

  it('refuses a dropped param of a node it had no reason to change', () => {
    const result = check(
      edit((w) => {
        (w.nodes[3] as Workflow['nodes'][number]).params.command = 'echo ok';
        delete (w.nodes[0] as Workflow['nodes'][number]).params.timeout_s;
      }),
    );
    expect(problems(result)).toContain(`node 'fetch' lost its param "timeout_s"; keep every param you do not mean to change`);
  });

  it('lets a person drop params (no keep-unchanged rule for a manual patch)', () => {
    const result = check(
      edit((w) => {
        (w.nodes[3] as Workflow['nodes'][number]).params.command = 'echo ok';
        delete (w.nodes[0] as Workflow['nodes'][number]).params.timeout_s;
      }),
      '',
      { keep: false },
    );
    // fetch's params change, and fetch has side effects: frozen still applies to a person.
    expect(problems(result).join('\n')).toMatch(/node 'fetch' already ran and has side effects/);
  });

  it('refuses dropped nodes, edges, outputs and changed top-level fields', () => {
    const result = check(
      edit((w) => {
        w.nodes.pop();
        w.edges.pop();
        w.outputs = {};
        w.description = 'something else';
      }),
    );
    expect(problems(result)).toEqual(
      expect.arrayContaining([
        'top-level "description" changed; a repair may only change nodes, edges and outputs',
        `node 'report' was dropped; keep it, or say in the reason that you remove 'report'`,
        "output 'out' was dropped",
      ]),
    );
  });

  it('allows removing a node the reason says it removes', () => {
    const result = check(
      edit((w) => {
        w.nodes.pop();
        w.edges.pop();
        w.outputs = { out: { source: '${notify.stdout}' } };
      }),
      "Removed the broken 'report' node; the output reads notify.",
    );
    expect(result.ok).toBe(true);
  });

  it('refuses to change a completed node with side effects', () => {
    const result = check(
      edit((w) => {
        (w.nodes[0] as Workflow['nodes'][number]).params.command = 'echo 2';
      }),
    );
    expect(problems(result)).toContain(`node 'fetch' already ran and has side effects, so it is frozen, but its params change: it would run a second time`);
  });

  it('refuses to change a pure node that a completed side-effect node depends on (transitively)', () => {
    const result = check(
      edit((w) => {
        (w.nodes[1] as Workflow['nodes'][number]).params.expression = '$ * 3';
      }),
    );
    expect(problems(result)).toEqual([
      `node 'notify' already ran and has side effects, so it is frozen, but it uses the outputs of 'shape', which would run again: it would run a second time`,
    ]);
  });

  it('refuses a changed input that a completed side-effect node reads (through a pure node too)', () => {
    const reading = edit((w) => {
      (w.nodes[0] as Workflow['nodes'][number]).params.command = 'echo ${who}';
    });
    const result = checkProposal({
      before: reading,
      proposal: { ...structuredClone(reading), inputs: { who: { type: 'string', default: 'bob' } } },
      completed,
      catalog: builtinCatalog,
    });
    expect(problems(result)).toEqual([
      `node 'fetch' already ran and has side effects, so it is frozen, but it reads input 'who', which changes: it would run a second time`,
      `node 'notify' already ran and has side effects, so it is frozen, but it uses the outputs of 'shape', which would run again: it would run a second time`,
    ]);
  });

  it('allows changing a completed pure node when nothing with side effects depends on it', () => {
    const result = check(
      edit((w) => {
        (w.nodes[1] as Workflow['nodes'][number]).params.expression = '$ * 3';
      }),
      'Changed shape.',
      {
        completed: completed.slice(0, 2),
      },
    );
    expect(result.ok).toBe(true);
  });

  it('refuses a changed side_effects declaration', () => {
    const result = check(
      edit((w) => {
        (w.nodes[3] as Workflow['nodes'][number]).params.command = 'echo ok';
        (w.nodes[2] as Workflow['nodes'][number]).side_effects = false;
      }),
    );
    expect(problems(result)).toContain(`node 'notify' "side_effects" changed; it must stay as declared`);
  });

  it('allows rerouting an edge', () => {
    const result = check(
      edit((w) => {
        w.nodes.push({ id: 'fallback', type: 'shell', params: { command: 'echo fallback' } });
        (w.edges[2] as Workflow['edges'][number]).to = 'fallback';
        w.edges.push({ from: 'fallback', to: 'report', action: 'default' });
      }),
    );
    expect(result.ok).toBe(true);
  });
});
