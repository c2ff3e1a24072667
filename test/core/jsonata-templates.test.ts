import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WorkflowSchema } from '../../functions/core/ir.ts';
import { MemoryRunStore } from '../../functions/core/memory-run-store.ts';
import { resolveParams, TemplateResolutionError } from '../../functions/core/templates.ts';
import { validateWorkflow } from '../../functions/core/validate.ts';
import { LocalHost } from '../../functions/hosts/local/local-host.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';
import { transformRunner } from '../../functions/nodes/transform.ts';

const context = { runId: 'r', nodeId: 'tx', seq: 1, cacheKey: 'k' };
const SECRET = { secret: 'CANARY-7f3a' };

/** Resolves the params as the engine does for a transform node, then runs the real runner on them. */
const evaluate = async (expression: string, value: unknown): Promise<unknown> => {
  const quoting = transformRunner.templateQuoting?.({ expression }) ?? {};
  const params = resolveParams({ expression, input: SECRET }, { inputs: { v: value }, nodes: {} }, quoting);
  const outcome = await transformRunner.run(transformRunner.paramsSchema.parse(params) as never, context);
  if (outcome.kind !== 'ok') throw new Error(outcome.error.message);
  return outcome.outputs.result;
};

/** Any string, attacker-shaped ones included: each tries to close the literal it stands in and read the input. */
const hostile = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.constantFrom(` & $string($$) & `, `' & $string($$) & '`, `" & $string($$) & "`, '*/ $string($$) /*', '\\', '\\u0022', '`', '/'),
);

describe('templates in a JSONata expression', () => {
  it("keeps issue 27's reproduction data: a value cannot close the string it stands in", async () => {
    expect(await evaluate("'Hello ${v}'", "' & $string($$) & '")).toBe("Hello ' & $string($$) & '");
    expect(await evaluate('"Hello ${v}"', '" & $string($$) & "')).toBe('Hello " & $string($$) & "');
  });

  it('binds a value standing as code as a variable, keeping its type', async () => {
    expect(await evaluate('${v} + 1', 41)).toBe(42);
    expect(await evaluate('$count(${v})', [1, 2, 3])).toBe(3);
    expect(await evaluate('${v}', ' & $string($$) & ')).toBe(' & $string($$) & ');
    expect(await evaluate('${v}.a', { a: 'x' })).toBe('x');
  });

  it('round-trips any string in each place a template can stand, and never reveals the input', async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (v) => {
        expect(await evaluate('"<${v}>"', v)).toBe(`<${v}>`);
        expect(await evaluate("'<${v}>'", v)).toBe(`<${v}>`);
        expect(await evaluate('${v}', v)).toBe(v);
        expect(await evaluate('/* ${v} */ "ok"', v)).toBe('ok');
        if (v !== '') expect(await evaluate('$contains("x" & ${v} & "y", /${v}/)', v)).toBe(true);
      }),
      { numRuns: 60 },
    );
  });

  it('refuses a template inside a `backtick` name, and validation says so', () => {
    expect(() => resolveParams({ expression: '`${v}`' }, { inputs: { v: 'a' }, nodes: {} }, { expression: 'jsonata' })).toThrow(TemplateResolutionError);
    const workflow = WorkflowSchema.parse({
      inputs: { v: { type: 'string' } },
      nodes: [
        { id: 'a', type: 'transform', params: { expression: '"Hi " & ${v}' } },
        { id: 'b', type: 'transform', params: { expression: '`${v}`' } },
        { id: 'c', type: 'transform', params: { expression: '${v}', raw: true } },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ],
    });
    const issues = validateWorkflow(workflow, builtinCatalog).map((i) => `${i.severity}:${i.code}:${i.path}`);
    expect(issues).toEqual(
      expect.arrayContaining([
        'warning:TEMPLATE_BOUND_AS_DATA:nodes[0].params.expression',
        'error:UNQUOTABLE_TEMPLATE:nodes[1].params.expression',
        'warning:RAW_SUBSTITUTION:nodes[2].params.expression',
      ]),
    );
  });

  it('runs through the local host: the value reaches the result as text, the input stays unread', async () => {
    const report = await new LocalHost({ store: new MemoryRunStore() }).start({
      workflow: WorkflowSchema.parse({
        inputs: { name: { type: 'string' } },
        nodes: [{ id: 'greet', type: 'transform', params: { expression: '"Hello " & ${name} & " and \'${name}\'"', input: SECRET } }],
        outputs: { text: { source: '${greet.result}' } },
      }),
      workflowName: 'jsonata-data',
      params: { name: '" & $string($$) & "' },
      repairEnabled: false,
      maxRepairs: 0,
    });
    expect(report.result).toEqual({ text: `Hello " & $string($$) & " and '" & $string($$) & "'` });
    expect(JSON.stringify(report)).not.toContain(SECRET.secret);
  });
});
