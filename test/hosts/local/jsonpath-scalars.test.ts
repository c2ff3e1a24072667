import { JSONPath } from 'jsonpath-plus';
import { describe, expect, it } from 'vitest';
import { makeScalarReadsCheap } from '../../../functions/hosts/local/jsonpath-scalars.ts';

const read = (path: string, json: unknown): unknown => JSONPath({ path, json: json as object, wrap: false });

describe('makeScalarReadsCheap', () => {
  it('applies to the pinned jsonpath-plus, and is idempotent', () => {
    expect(makeScalarReadsCheap()).toBe(true);
    expect(makeScalarReadsCheap()).toBe(true);
  });

  it('keeps every kind of value a Choice reads, scalars included', () => {
    makeScalarReadsCheap();
    const json = { kind: 'run', n: 0, flag: false, none: null, node: { type: 'transform' }, list: [1, 2] };
    expect(read('$.kind', json)).toBe('run');
    expect(read('$.n', json)).toBe(0);
    expect(read('$.flag', json)).toBe(false);
    expect(read('$.none', json)).toBeNull();
    expect(read('$.node.type', json)).toBe('transform');
    expect(read('$.missing', json)).toBeUndefined();
    expect(read('$.node', json)).toEqual({ type: 'transform' });
    expect(read('$.list', json)).toEqual([1, 2]);
  });

  it('hands a scalar back without building an Error (no stack trace captured)', () => {
    makeScalarReadsCheap();
    let signal: unknown;
    try {
      new (JSONPath as unknown as new (options: object) => unknown)({ path: '$.a', json: { a: 1 }, wrap: false });
    } catch (error) {
      signal = error;
    }
    expect(signal).toMatchObject({ avoidNew: true, value: 1 });
    expect(signal).not.toBeInstanceOf(Error);
    expect((signal as { stack?: unknown }).stack).toBeUndefined();
  });

  it('still lets real errors through, as Errors with their stack', () => {
    makeScalarReadsCheap();
    expect(() => read('$.a[?(@.b ==', { a: [{ b: 1 }] })).toThrow(Error);
    expect(() => read('$..*@other()', { a: 1 })).toThrow(TypeError);
  });
});
