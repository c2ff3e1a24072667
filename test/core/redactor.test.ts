import { describe, expect, it } from 'vitest';
import { REDACTED, Redactor } from '../../functions/core/redactor.ts';

const SECRET = 'sk-test-0123456789';

describe('Redactor.value', () => {
  it('redacts every string and key, and leaves the input as it was', () => {
    const input = { a: `key ${SECRET}`, [`k-${SECRET}`]: 1, list: [SECRET, 2, { deep: SECRET }] };
    const before = structuredClone(input);
    const out = new Redactor([SECRET]).value(input);
    expect(out).toEqual({ a: `key ${REDACTED}`, [`k-${REDACTED}`]: 1, list: [REDACTED, 2, { deep: REDACTED }] });
    expect(input).toEqual(before);
  });

  it('hands back the plain objects and arrays with nothing to redact in them, not copies', () => {
    const latest = { n0: 1, n1: 2 };
    const input = { latest, tags: ['a', 'b'], outputs: { result: SECRET }, nested: { plain: { x: 1 }, hit: [SECRET] } };
    const out = new Redactor([SECRET]).value(input);
    expect(out).not.toBe(input);
    expect(out.latest).toBe(latest);
    expect(out.tags).toBe(input.tags);
    expect(out.nested.plain).toBe(input.nested.plain);
    expect(out.outputs).toEqual({ result: REDACTED });
    expect(out.nested.hit).toEqual([REDACTED]);
    const clean = { a: { b: [1, 'two'] } };
    expect(new Redactor([SECRET]).value(clean)).toBe(clean);
  });

  it('copies anything but a plain object as before, and keeps a key named __proto__ as an own key', () => {
    class Thing {
      a = 'x';
    }
    const out = new Redactor([SECRET]).value({ thing: new Thing() });
    expect(Object.getPrototypeOf(out.thing)).toBe(Object.prototype);
    expect(out.thing).toEqual({ a: 'x' });
    const parsed = JSON.parse(`{"__proto__": "${SECRET}", "b": 1}`) as Record<string, unknown>;
    const redacted = new Redactor([SECRET]).value(parsed);
    expect(Object.hasOwn(redacted, '__proto__')).toBe(true);
    expect(Object.getOwnPropertyDescriptor(redacted, '__proto__')?.value).toBe(REDACTED);
    expect(Object.getPrototypeOf(redacted)).toBe(Object.prototype);
  });
});
