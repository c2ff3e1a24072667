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

  /** A copy of `value` with every string (keys included) redacted; the input is not changed. */
  value<T>(value: T): T {
    if (this.empty) return value;
    return this.deep(value) as T;
  }

  private deep(value: unknown): unknown {
    if (typeof value === 'string') return this.text(value);
    if (Array.isArray(value)) return value.map((item) => this.deep(item));
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        Object.defineProperty(out, this.text(key), { value: this.deep(item), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
    return value;
  }
}
