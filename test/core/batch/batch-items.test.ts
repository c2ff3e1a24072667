import { describe, expect, it } from 'vitest';
import { BatchConfigSchema, batchWidth, MAX_BATCH_WIDTH } from '../../../functions/core/batch/batch-config.ts';
import { itemContext, resolveItems, withIndex } from '../../../functions/core/batch/batch-items.ts';
import { resolveParams, TemplateResolutionError } from '../../../functions/core/templates.ts';

const config = (items: unknown) => BatchConfigSchema.parse({ items });
const context = { inputs: { list: [1, 2] }, nodes: { fetch: { stdout: '["a","b","c"]', text: 'not json', one: 7 } } };

describe('resolveItems', () => {
  it("takes a literal array, a template, or text holding a JSON array (a shell node's stdout)", () => {
    expect(resolveItems(config([3, 4]), context)).toEqual([3, 4]);
    expect(resolveItems(config('${list}'), context)).toEqual([1, 2]);
    expect(resolveItems(config('${fetch.stdout}'), context)).toEqual(['a', 'b', 'c']);
  });

  it('refuses anything else with a message naming batch.items and what it got', () => {
    expect(() => resolveItems(config('${fetch.text}'), context)).toThrow(TemplateResolutionError);
    expect(() => resolveItems(config('${fetch.text}'), context)).toThrow(
      /batch\.items .* must be an array or text holding a JSON array, not text that is not a JSON array/,
    );
    expect(() => resolveItems(config('${fetch.one}'), context)).toThrow(/not number/);
    expect(() => resolveItems(config('${fetch.nope}'), context)).toThrow(/fetch\.nope/);
  });
});

describe('item params', () => {
  it('resolve the item under its `as` name, its index, and a nested index template', () => {
    const batch = BatchConfigSchema.parse({ items: '${list}', as: 'n' });
    const params = withIndex({ a: '${n}', b: 'at ${__index__}', c: '${prev.results[${__index__}].v}', d: ['[${__index__}]'] }, 1) as Record<string, unknown>;
    const ctx = itemContext({ inputs: {}, nodes: { prev: { results: [{ v: 'x' }, { v: 'y' }] } } }, batch, 20, 1);
    expect(resolveParams(params, ctx)).toEqual({ a: 20, b: 'at 1', c: 'y', d: ['[1]'] });
  });
});

describe('batchWidth', () => {
  it("runs max_concurrent items at once up to 40, an inline Map's most on AWS, whatever pflow's 1-100 allows", () => {
    const width = (batch: Record<string, unknown>) => batchWidth(BatchConfigSchema.parse({ items: [1], ...batch }));
    expect(width({ parallel: true, max_concurrent: 10 })).toBe(10);
    expect(width({ parallel: true, max_concurrent: 40 })).toBe(40);
    expect(width({ parallel: true, max_concurrent: 100 })).toBe(MAX_BATCH_WIDTH);
    expect(width({ parallel: false, max_concurrent: 100 })).toBe(1);
  });
});
