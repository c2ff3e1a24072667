/** DynamoDB's limit on one item: names and values together. */
export const MAX_ITEM_BYTES = 400 * 1024;

const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Significant digits, leading and trailing zeros trimmed, as DynamoDB counts them. */
const significantDigits = (n: number): number => {
  const digits = Math.abs(n).toExponential().split('e')[0]?.replace('.', '') ?? '';
  return Math.max(1, digits.replace(/0+$/, '').length);
};

/** Size of one value by AWS's published rules (strings UTF-8, numbers ~1 byte per 2 digits + 1, 3 bytes per map/list). */
export function valueSize(value: unknown): number {
  if (typeof value === 'string') return utf8Bytes(value);
  if (typeof value === 'number') return Math.ceil(significantDigits(value) / 2) + 1;
  if (typeof value === 'bigint') return Math.ceil(value.toString().replace('-', '').length / 2) + 1;
  if (value === null || typeof value === 'boolean' || value === undefined) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (Array.isArray(value)) return value.reduce<number>((sum, v) => sum + 1 + valueSize(v), 3);
  if (typeof value === 'object') {
    return Object.entries(value).reduce<number>((sum, [k, v]) => sum + utf8Bytes(k) + 1 + valueSize(v), 3);
  }
  return 0;
}

/** Size of a whole item (top-level attribute names included). */
export const itemSize = (item: Record<string, unknown>): number => Object.entries(item).reduce<number>((sum, [k, v]) => sum + utf8Bytes(k) + valueSize(v), 0);
