import { describe, expect, it } from 'vitest';
import { BatchConfigSchema, parseWorkflow, RunEventSchema } from '../../functions/core/index.ts';
import { builtOnFirstUse } from '../../functions/core/lazy-schema.ts';
import * as z from '../../functions/core/zod.ts';

describe('builtOnFirstUse', () => {
  it('builds the schema on the first parse, once, and unwrap() gives the instance the parses use', () => {
    let builds = 0;
    const schema = builtOnFirstUse(() => {
      builds += 1;
      return z.object({ n: z.int() });
    });
    expect(builds).toBe(0);
    expect(schema.parse({ n: 1 })).toEqual({ n: 1 });
    expect(schema.safeParse({ n: 1.5 }).success).toBe(false);
    const inner = schema.unwrap();
    expect(schema.unwrap()).toBe(inner);
    expect(Object.keys(inner.shape)).toEqual(['n']);
    expect(builds).toBe(1);
  });

  it('reports the same issues, with the same paths and messages, as the schema built at once', () => {
    const build = () => z.strictObject({ items: z.array(z.string().check(z.minLength(2, 'at least two characters'))) });
    const bad = { items: ['ok', 'x'], extra: true };
    const eager = build().safeParse(bad);
    const lazy = builtOnFirstUse(build).safeParse(bad);
    expect(lazy.success).toBe(false);
    expect(lazy.error?.issues).toEqual(eager.error?.issues);
  });

  it('keeps the deferred core schemas at the boundaries: a bad batch, a bad event', () => {
    const result = parseWorkflow({ nodes: [{ id: 'a', type: 'shell', params: { command: 'true' }, batch: { items: [1], concurency: 2 } }] });
    expect(result.ok).toBe(false);
    // The unknown key is named, with the valid ones read from the (deferred) batch schema.
    expect(JSON.stringify(result)).toMatch(/concurency[\s\S]*max_concurrent/);
    expect(Object.keys(BatchConfigSchema.unwrap().shape)).toContain('max_concurrent');
    expect(RunEventSchema.safeParse({ runId: 'run-123456', key: 'k', at: 1, type: 'no_such_event' }).success).toBe(false);
  });
});
