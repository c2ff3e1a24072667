import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, sameJson } from '../../functions/core/cache-key.ts';

// sameJson must answer exactly what comparing the two canonicalJson strings answers: the patch checks and
// diffs decide with it which nodes changed, and a node taken for unchanged is replayed.

/** Leaves JSON writes its own way beside plain ones: undefined, NaN, -0, Infinity, a Date, a function, a toJSON. */
const leaf = fc.oneof(
  fc.string({ maxLength: 4 }),
  fc.integer({ min: -3, max: 3 }),
  fc.double({ noNaN: false }),
  fc.boolean(),
  fc.constantFrom(null, undefined, Number.NaN, -0, 0, Number.POSITIVE_INFINITY, '1', 1, 'null'),
  fc.constantFrom(new Date(0), () => 1, { toJSON: () => 'x' }, Object.create(null) as object),
);
const key = fc.constantFrom('a', 'b', 'c', '0', '1', '10', '9', '__proto__', 'toJSON');

const { value } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }),
  object: fc.dictionary(key, tie('value'), { maxKeys: 5 }),
}));

/** The same value with every object's keys inserted in reverse order (canonicalJson sorts them again). */
const reordered = (v: unknown): unknown => {
  if (Array.isArray(v)) return v.map(reordered);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).reverse())
      Object.defineProperty(out, k, { value: reordered((v as Record<string, unknown>)[k]), enumerable: true, writable: true, configurable: true });
    return out;
  }
  return v;
};

/** The value with one leaf replaced, found by walking `path` (numbers pick a child). */
const changed = (v: unknown, path: number[], replacement: unknown): unknown => {
  const [step, ...rest] = path;
  if (step === undefined) return replacement;
  if (Array.isArray(v) && v.length > 0) return v.map((x, i) => (i === step % v.length ? changed(x, rest, replacement) : x));
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const keys = Object.keys(v);
    if (keys.length === 0) return replacement;
    const pick = keys[step % keys.length] as string;
    const out: Record<string, unknown> = {};
    for (const k of keys)
      Object.defineProperty(out, k, {
        value: k === pick ? changed((v as Record<string, unknown>)[k], rest, replacement) : (v as Record<string, unknown>)[k],
        enumerable: true,
        writable: true,
        configurable: true,
      });
    return out;
  }
  return replacement;
};

const agrees = (a: unknown, b: unknown): void => {
  let strings: boolean | Error;
  try {
    strings = canonicalJson(a) === canonicalJson(b);
  } catch (error) {
    strings = error as Error;
  }
  if (strings instanceof Error) expect(() => sameJson(a, b)).toThrow();
  else expect(sameJson(a, b)).toBe(strings);
};

describe('sameJson', () => {
  it('answers as the canonical strings do, for any two values', () => {
    fc.assert(fc.property(value, value, agrees), { numRuns: 3000 });
  });

  it('answers as the canonical strings do for a value and itself reordered, or with one leaf changed', () => {
    fc.assert(
      fc.property(value, fc.array(fc.nat(), { maxLength: 4 }), leaf, (v, path, replacement) => {
        agrees(v, reordered(v));
        agrees(v, changed(v, path, replacement));
        agrees(reordered(v), changed(v, path, replacement));
      }),
      { numRuns: 3000 },
    );
  });

  it('takes an undefined value for an absent key and -0 for 0, as JSON does, and tells arrays from objects', () => {
    expect(sameJson({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameJson([undefined], [null])).toBe(true);
    expect(sameJson(-0, 0)).toBe(true);
    expect(sameJson({ b: 1, a: [1, { d: 2, c: 3 }] }, { a: [1, { c: 3, d: 2 }], b: 1 })).toBe(true);
    expect(sameJson({ a: 1 }, { a: '1' })).toBe(false);
    expect(sameJson([], {})).toBe(false);
    expect(sameJson({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
  });

  it('throws on two cycles as canonicalJson does', () => {
    const a: Record<string, unknown> = {};
    a.self = a;
    const b: Record<string, unknown> = {};
    b.self = b;
    expect(() => canonicalJson(a)).toThrow();
    agrees(a, b);
  });
});
