import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ShellQuotingError } from '../../functions/core/shell-quote.ts';
import { ShellContextScanner } from '../../functions/core/shell-scanner.ts';
import { resolveParams, resolveValue, TemplateResolutionError } from '../../functions/core/templates.ts';
import { parseWorkflow, type ValidationIssue, validateWorkflow } from '../../functions/core/validate.ts';
import { builtinCatalog } from '../../functions/nodes/catalog.ts';

const catalog = builtinCatalog;
const RUNS = { numRuns: 150 };

/** Every rejection is data that names a field and says something. */
const expectClearIssues = (issues: readonly ValidationIssue[]): void => {
  expect(issues.length).toBeGreaterThan(0);
  for (const issue of issues) {
    expect(typeof issue.path).toBe('string');
    expect(issue.message.length).toBeGreaterThan(5);
    expect(issue.message).not.toMatch(/\n\s+at /);
  }
};

const names = fc.oneof(fc.constantFrom('a', 'b', 'c', 'fetch', '__proto__', 'constructor', 'toString', 'x-y', '1bad', ''), fc.string({ maxLength: 6 }));
const templateText = fc
  .array(
    fc.oneof(
      fc.string({ maxLength: 6 }),
      names.map((n) => `\${${n}}`),
      names.map((n) => `\${a.${n}[0]}`),
      fc.constantFrom('$${a}', '${', '}', '"', "'", '\\', '`', '$(', '<<EOF\n'),
    ),
    { maxLength: 8 },
  )
  .map((parts) => parts.join(''));
const params = fc.dictionary(
  fc.constantFrom('command', 'stdin', 'url', 'headers', 'expression', 'input', 'raw', 'env', 'timeout_s', 'prompt', 'zzz'),
  fc.oneof(templateText, fc.jsonValue({ maxDepth: 3 })),
  { maxKeys: 4 },
);
const node = fc.record({ id: names, type: fc.constantFrom('shell', 'http', 'transform', 'llm', 'nope'), params }, { requiredKeys: ['id', 'type'] });
const workflowLike = fc.record(
  {
    inputs: fc.dictionary(
      names,
      fc.record({ type: fc.constantFrom('string', 'number', 'bogus'), secret: fc.boolean(), default: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }),
      { maxKeys: 3 },
    ),
    nodes: fc.array(node, { maxLength: 5 }),
    edges: fc.array(fc.record({ from: names, to: names, action: fc.constantFrom('default', 'error', '') }), { maxLength: 6 }),
    outputs: fc.dictionary(names, fc.record({ source: templateText }), { maxKeys: 2 }),
    start_node: names,
  },
  { requiredKeys: ['nodes'] },
);

describe('fuzzing the IR parser and validation', () => {
  it('parses any JSON value without throwing; a rejection names fields', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (raw) => {
        const parsed = parseWorkflow(raw);
        if (!parsed.ok) expectClearIssues(parsed.issues);
      }),
      RUNS,
    );
  });

  it('parses and validates workflow-shaped input (hostile names, templates, params) without throwing', () => {
    fc.assert(
      fc.property(workflowLike, (raw) => {
        const parsed = parseWorkflow(JSON.parse(JSON.stringify(raw)));
        if (!parsed.ok) return expectClearIssues(parsed.issues);
        for (const issue of validateWorkflow(parsed.workflow, catalog)) expect(issue.message.length).toBeGreaterThan(5);
      }),
      RUNS,
    );
  });

  it('refuses nesting thousands of levels deep with one clear issue instead of a stack overflow', () => {
    for (const where of ['params', 'default', 'mappings'] as const) {
      let deep: unknown = 'x';
      for (let i = 0; i < 20_000; i += 1) deep = i % 2 ? [deep] : { k: deep };
      const raw = {
        inputs: where === 'default' ? { a: { type: 'object', default: deep } } : {},
        nodes: [{ id: 'n', type: 'shell', params: where === 'params' ? { command: 'true', stdin: deep } : { command: 'true' } }],
        ...(where === 'mappings' ? { mappings: deep } : {}),
      };
      const parsed = parseWorkflow(raw);
      expect(parsed.ok).toBe(false);
      if (!parsed.ok) expect(parsed.issues.map((i) => i.code)).toEqual(['TOO_DEEP']);
    }
  });
});

describe('fuzzing templates and shell quoting', () => {
  const context = fc.record({
    inputs: fc.dictionary(names, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }),
    nodes: fc.dictionary(names, fc.dictionary(names, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 3 }), { maxKeys: 3 }),
  });

  it('resolves any text against any context, or fails with a TemplateResolutionError', () => {
    fc.assert(
      fc.property(templateText, context, fc.boolean(), (text, ctx, quoted) => {
        try {
          const out = quoted ? resolveParams({ command: text }, ctx, { command: 'shell' }) : resolveValue(text, ctx);
          expect(out).toBeDefined();
        } catch (error) {
          expect(error).toBeInstanceOf(TemplateResolutionError);
          expect((error as Error).message).toMatch(/template/i);
        }
      }),
      RUNS,
    );
  });

  it('scans any command text without throwing, except a refusal to place a template', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 40 }), (text) => {
        const scanner = new ShellContextScanner();
        scanner.feed(text);
        try {
          expect(['bare', 'double', 'single', 'comment']).toContain(scanner.context().quote);
        } catch (error) {
          expect(error).toBeInstanceOf(ShellQuotingError);
        }
      }),
      RUNS,
    );
  });
});
