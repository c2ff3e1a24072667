// A workflow is parsed and validated once per process where a run's path asks twice (parse-workflow.ts,
// validate.ts): what the second call answers must be what it would have computed.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../../functions/core/limits.ts';
import { makeCatalog } from '../../functions/core/node-type.ts';
import { parseWorkflow, validateWorkflow } from '../../functions/core/validate.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

const raw = {
  nodes: [
    { id: 'a', type: 'shell', params: { command: 'echo "x"' } },
    { id: 'b', type: 'transform', params: { expression: '$', input: '${a.stdout}' } },
    { id: 'c', type: 'shell', params: { command: 'echo "${nope.stdout}"' } },
  ],
  edges: [
    { from: 'a', to: 'b' },
    { from: 'b', to: 'c' },
  ],
};

const parsed = () => {
  const first = parseWorkflow(structuredClone(raw));
  if (!first.ok) throw new Error(JSON.stringify(first.issues));
  return first.workflow;
};

describe('a parsed workflow parsed again', () => {
  it('comes back as it is under the same limits and no pflow options', () => {
    const workflow = parsed();
    expect(parseWorkflow(workflow)).toEqual({ ok: true, workflow });
    expect((parseWorkflow(workflow) as { workflow: unknown }).workflow).toBe(workflow);
  });

  it('is checked again under other limits: a stricter one refuses it', () => {
    const workflow = parsed();
    const stricter = { ...DEFAULT_LIMITS, maxStringChars: 5 };
    const again = parseWorkflow(workflow, {}, stricter);
    expect(again.ok).toBe(false);
    expect(JSON.stringify(again)).toContain('the limit is 5');
  });
});

describe('a workflow validated again', () => {
  it('answers the same issues, which a caller may change without changing the next answer', () => {
    const workflow = parsed();
    const first = validateWorkflow(workflow, builtinCatalog);
    expect(first.some((i) => i.severity === 'error' && i.message.includes('nope'))).toBe(true);
    const expected = structuredClone(first);
    for (const issue of first) issue.message = 'changed';
    first.length = 0;
    expect(validateWorkflow(workflow, builtinCatalog)).toEqual(expected);
  });

  it('against another catalog is validated against that one', () => {
    const workflow = parsed();
    expect(validateWorkflow(workflow, builtinCatalog).some((i) => i.code === 'UNKNOWN_NODE_TYPE')).toBe(false);
    const noTransform = makeCatalog([...builtinCatalog.values()].filter((spec) => spec.type !== 'transform'));
    expect(validateWorkflow(workflow, noTransform).map((i) => i.code)).toContain('UNKNOWN_NODE_TYPE');
    // The same types, one of them changed: shell no longer writes stdout, which 'b' reads.
    const changed = makeCatalog([...builtinCatalog.values()].map((spec) => (spec.type === 'shell' ? { ...spec, outputKeys: ['other'] } : spec)));
    const before = validateWorkflow(workflow, builtinCatalog).filter((i) => i.message.includes('a.stdout')).length;
    expect(validateWorkflow(workflow, changed).filter((i) => i.message.includes('a.stdout')).length).toBeGreaterThan(before);
    // Runners made of the same specs (a spec and a run function) validate as the specs do.
    const runners = makeCatalog([...builtinCatalog.values()].map((spec) => ({ ...spec, run: async () => ({}) })));
    expect(validateWorkflow(workflow, runners)).toEqual(validateWorkflow(workflow, builtinCatalog));
  });
});
