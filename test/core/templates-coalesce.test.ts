import { describe, expect, it } from 'vitest';
import { findTemplates, resolveParams, resolveValue, type TemplateContext, TemplateResolutionError } from '../../functions/core/templates.ts';

// pflow's 2026 templates (issue 29): `??` with JSON-literal fallbacks, dynamic indexes, failed nodes absent to `??`.
const context: TemplateContext = {
  inputs: { pick: 1, key: 'b', nothing: null },
  nodes: {
    ran: { stdout: 'from ran', list: ['x', 'y', 'z'], empty: null },
    failed: { stdout: 'partial', stderr: 'boom' },
    counter: { result: { i: 2 } },
  },
  failed: new Set(['failed']),
};

describe('templates: ?? (the first present operand wins)', () => {
  it('passes by a node that did not run, a missing field and a failed node; a literal ends the chain', () => {
    expect(resolveValue('${never.stdout ?? ran.stdout}', context)).toBe('from ran');
    expect(resolveValue('${ran.nope ?? ran.stdout}', context)).toBe('from ran');
    expect(resolveValue('${failed.stdout ?? ran.stdout}', context)).toBe('from ran');
    expect(resolveValue('${never.x ?? "fallback"}', context)).toBe('fallback');
    expect(resolveValue('${never.x??0}', context)).toBe(0);
    expect(resolveValue('${never.x ?? []}', context)).toEqual([]);
    expect(resolveValue('${never.x ?? {}}', context)).toEqual({});
    expect(resolveValue('${never.x ?? false}', context)).toBe(false);
    expect(resolveValue('text ${never.x ?? "a b"} end', context)).toBe('text a b end');
  });

  it('stops at a value that is present, even null', () => {
    expect(resolveValue('${ran.empty ?? "fallback"}', context)).toBeNull();
    expect(resolveValue('${nothing ?? "fallback"}', context)).toBeNull();
  });

  it("still reads a failed node's outputs by a plain reference (an error handler reads what went wrong)", () => {
    expect(resolveValue('${failed.stderr}', context)).toBe('boom');
  });

  it('fails like any unresolved template when no operand is present, naming the whole expression', () => {
    expect(() => resolveValue('${never.stdout ?? failed.stdout}', context)).toThrow(TemplateResolutionError);
    try {
      resolveParams({ command: 'echo ${never.stdout ?? failed.stdout}' }, context);
    } catch (error) {
      expect((error as TemplateResolutionError).message).toMatch(/\$\{never\.stdout \?\? failed\.stdout\} — no operand is present .*'failed' failed/);
    }
  });

  it('lists every operand as a template (validation and the engine read each node it names)', () => {
    expect(findTemplates('${a.x ?? b.y ?? "z"}').map((r) => r.root)).toEqual(['a', 'b']);
  });
});

describe('templates: dynamic indexes [${x}]', () => {
  it('index a list by another value (an integer, or digits as text), and read on past it', () => {
    expect(resolveValue('${ran.list[${pick}]}', context)).toBe('y');
    expect(resolveValue('${ran.list[${counter.result.i}]}', context)).toBe('z');
    expect(findTemplates('${ran.list[${counter.result.i}].name}').map((r) => r.expr)).toEqual(['ran.list[${counter.result.i}].name', 'counter.result.i']);
  });

  it('refuse an index that is not a whole number, saying what it was', () => {
    expect(() => resolveValue('${ran.list[${key}]}', context)).toThrow(/its index \$\{key\} is "b", not a whole number/);
  });
});

describe('templates: escapes and text that is not a template', () => {
  it('$${...} is the literal ${...}, whatever it holds (pflow: $${VAR:-x} reaches a shell as ${VAR:-x})', () => {
    expect(resolveValue('echo $${HOME:-/root} ${ran.stdout}', context)).toBe('echo ${HOME:-/root} from ran');
  });

  it('a ${ that holds no expression stays as it is', () => {
    expect(resolveValue('echo ${VAR:-x} ${ran.stdout}', context)).toBe('echo ${VAR:-x} from ran');
  });
});
