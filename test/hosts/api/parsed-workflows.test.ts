import { describe, expect, it } from 'vitest';
import { ParsedWorkflows } from '../../../functions/hosts/api/parsed-workflows.ts';

const workflow = (id: string) => ({
  inputs: { who: { type: 'string', default: 'world' } },
  nodes: [{ id, type: 'transform', params: { expression: '$', input: { greeting: ['hello', '${who}'] } } }],
});

/** Every object under `value` (itself included) that is not frozen, by path. */
const unfrozen = (value: unknown, path = '$'): string[] =>
  value === null || typeof value !== 'object'
    ? []
    : [...(Object.isFrozen(value) ? [] : [path]), ...Object.entries(value).flatMap(([key, inner]) => unfrozen(inner, `${path}.${key}`))];

describe('ParsedWorkflows', () => {
  it('parses a text once and hands back the same workflow, frozen to its leaves', () => {
    const memo = new ParsedWorkflows();
    const first = memo.parse(workflow('a'));
    const again = memo.parse(JSON.parse(JSON.stringify(workflow('a'))));
    if (!first.ok || !again.ok) throw new Error('did not parse');
    expect(again.workflow).toBe(first.workflow);
    expect(memo.stats).toEqual({ hits: 1, misses: 1 });
    expect(unfrozen(first.workflow)).toEqual([]);
    expect(() => {
      (first.workflow.nodes[0] as { id: string }).id = 'b';
    }).toThrow(TypeError);
  });

  it('tells texts apart that differ anywhere, and keeps no workflow that does not parse', () => {
    const memo = new ParsedWorkflows();
    const a = memo.parse(workflow('a'));
    const b = memo.parse(workflow('b'));
    if (!a.ok || !b.ok) throw new Error('did not parse');
    expect(b.workflow).not.toBe(a.workflow);
    const broken = { nodes: [{ id: 'x', type: 'transform', params: {} }], edges: 'none' };
    const refused = memo.parse(broken);
    expect(refused.ok).toBe(false);
    expect(memo.parse(broken)).toEqual(refused);
    expect(memo.stats).toEqual({ hits: 0, misses: 4 });
  });

  it('keeps at most its entries, dropping the least recently used, and no text over its size', () => {
    const memo = new ParsedWorkflows({ entries: 2, maxChars: 400 });
    memo.parse(workflow('a'));
    memo.parse(workflow('b'));
    memo.parse(workflow('a')); // a is now the most recent
    memo.parse(workflow('c')); // drops b
    memo.parse(workflow('a'));
    expect(memo.stats).toEqual({ hits: 2, misses: 3 });
    memo.parse(workflow('b'));
    expect(memo.stats).toEqual({ hits: 2, misses: 4 });
    const long = workflow('x'.repeat(400));
    const once = memo.parse(long);
    const twice = memo.parse(long);
    if (!once.ok || !twice.ok) throw new Error('did not parse');
    expect(twice.workflow).not.toBe(once.workflow);
    expect(Object.isFrozen(once.workflow)).toBe(false);
  });
});
