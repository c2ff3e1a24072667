/** What stands for a secret value wherever it would have been written or printed. */
export const REDACTED = '[redacted]';

/**
 * Values shorter than this are not redacted: replacing every "on" or "42" in a run's outputs would
 * destroy them and protect nothing (a secret that short is not one).
 */
export const MIN_SECRET_CHARS = 6;

/** Replaces known secret values in text and in JSON-like data, everywhere they occur. */
export class Redactor {
  private readonly secrets: string[];

  constructor(values: Iterable<string | undefined>) {
    const kept = new Set<string>();
    for (const value of values) if (value !== undefined && value.length >= MIN_SECRET_CHARS) kept.add(value);
    // Longest first, so that a secret containing another is replaced whole.
    this.secrets = [...kept].sort((a, b) => b.length - a.length);
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  text(text: string): string {
    let out = text;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
    return out;
  }

  /**
   * `value` with every string (keys included) redacted; the input is not changed. A plain object or array
   * with nothing to redact in it is the input's own, not a copy: a run item's path maps (node ids and
   * numbers) stay the objects the engine changes, which the run store writes as changes (run-path.ts),
   * and a long run's item is not copied whole at every write.
   */
  value<T>(value: T): T {
    if (this.empty) return value;
    return this.deep(value) as T;
  }

  private deep(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) {
      let out: unknown[] | undefined;
      value.forEach((item, i) => {
        const redacted = this.deep(item);
        if (out === undefined && !Object.is(redacted, item)) out = value.slice(0, i);
        out?.push(redacted);
      });
      return out ?? value;
    }
    if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      const prototype = Object.getPrototypeOf(value);
      // Anything but a plain object is copied as before (to a plain object), changed or not.
      let out: Record<string, unknown> | undefined = prototype === Object.prototype || prototype === null ? undefined : {};
      entries.forEach(([key, item], i) => {
        const name = this.text(key);
        const redacted = this.deep(item);
        if (out === undefined && (name !== key || !Object.is(redacted, item))) {
          out = {};
          for (const [earlierKey, earlier] of entries.slice(0, i)) define(out, earlierKey, earlier);
        }
        if (out) define(out, name, redacted);
      });
      return out ?? value;
    }
    return value;
  }
}

/** An own enumerable property, whatever its name (`__proto__` included). */
const define = (out: Record<string, unknown>, key: string, value: unknown): void => {
  Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
};
