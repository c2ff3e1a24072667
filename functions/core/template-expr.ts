/** A path template (`node.key[0].x`); `expr` is its text inside `${...}`. */
export interface TemplateRef {
  expr: string;
  root: string;
  /** A dynamic index (`[${x}]`) stands here as 0 until it is resolved (validation reads it so). */
  path: (string | number)[];
  /** pflow's dynamic indexes: the segment at `at` is the value of `ref` (an integer). */
  dynamic?: { at: number; ref: TemplateRef }[];
}

/** One operand of a `??` chain: a path, or a JSON literal that ends the chain. */
export type Operand = { kind: 'path'; ref: TemplateRef } | { kind: 'literal'; value: unknown };

/** The text of one `${...}`: a path, or pflow's `a ?? b ?? "literal"` (the first operand that is present wins). */
export interface Expression {
  expr: string;
  operands: Operand[];
}

const NAME = /[a-zA-Z_][\w-]*/y;
const INDEX = /\d+/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const SPACE = /\s*/y;

class Scanner {
  constructor(
    readonly text: string,
    public at: number,
  ) {}
  match(pattern: RegExp): string | undefined {
    pattern.lastIndex = this.at;
    const m = pattern.exec(this.text);
    if (!m) return undefined;
    this.at += m[0].length;
    return m[0];
  }
  eat(literal: string): boolean {
    if (!this.text.startsWith(literal, this.at)) return false;
    this.at += literal.length;
    return true;
  }
  skipSpace(): void {
    this.match(SPACE);
  }
}

/** `[N]` or `[${path}]` after a name, or undefined (the scanner is left where it was). */
function index(s: Scanner, path: (string | number)[], dynamic: { at: number; ref: TemplateRef }[]): boolean {
  const start = s.at;
  if (!s.eat('[')) return false;
  const digits = s.match(INDEX);
  if (digits !== undefined && s.eat(']')) {
    path.push(Number(digits));
    return true;
  }
  s.at = start + 1;
  if (s.eat('${')) {
    const inner = pathAt(s);
    if (inner && s.eat('}') && s.eat(']')) {
      dynamic.push({ at: path.length, ref: inner });
      path.push(0);
      return true;
    }
  }
  s.at = start;
  return false;
}

function pathAt(s: Scanner): TemplateRef | undefined {
  const start = s.at;
  const root = s.match(NAME);
  if (root === undefined) return undefined;
  const path: (string | number)[] = [];
  const dynamic: { at: number; ref: TemplateRef }[] = [];
  while (index(s, path, dynamic));
  for (;;) {
    const dot = s.at;
    if (!s.eat('.')) break;
    const name = s.match(NAME);
    if (name === undefined) {
      s.at = dot;
      break;
    }
    path.push(name);
    while (index(s, path, dynamic));
  }
  return { expr: s.text.slice(start, s.at), root, path, ...(dynamic.length > 0 ? { dynamic } : {}) };
}

/** pflow's JSON literals in a `??` chain: a double-quoted string (without `??`), true, false, null, a number, [] or {}. */
function literalAt(s: Scanner): { value: unknown } | undefined {
  for (const [word, value] of [
    ['true', true],
    ['false', false],
    ['null', null],
    ['[]', []],
    ['{}', {}],
  ] as const) {
    if (s.text.startsWith(word, s.at) && !/[\w-]/.test(s.text[s.at + word.length] ?? '')) {
      s.at += word.length;
      return { value: Array.isArray(value) ? [] : typeof value === 'object' && value !== null ? {} : value };
    }
  }
  if (s.text[s.at] === '"') {
    const end = s.text.indexOf('"', s.at + 1);
    let close = end;
    while (close > 0 && s.text[close - 1] === '\\') close = s.text.indexOf('"', close + 1);
    if (close < 0) return undefined;
    const raw = s.text.slice(s.at, close + 1);
    if (raw.includes('??')) return undefined;
    try {
      const value: unknown = JSON.parse(raw);
      s.at = close + 1;
      return { value };
    } catch {
      return undefined;
    }
  }
  const number = s.match(NUMBER);
  return number === undefined ? undefined : { value: Number(number) };
}

/**
 * The expression of a `${` whose `$` is at `start`, and where its `}` ends; undefined when the text there
 * is not one (it then stays literal text, as `${VAR:-x}` for a shell does).
 */
export function parseExpressionAt(text: string, start: number): { expression: Expression; end: number } | undefined {
  const s = new Scanner(text, start + 2);
  const operands: Operand[] = [];
  const exprStart = s.at;
  for (;;) {
    if (operands.length > 0) s.skipSpace();
    const literal = operands.length > 0 ? literalAt(s) : undefined;
    if (literal) operands.push({ kind: 'literal', value: literal.value });
    else {
      const ref = pathAt(s);
      if (!ref) return undefined;
      operands.push({ kind: 'path', ref });
    }
    const before = s.at;
    s.skipSpace();
    if (s.eat('??')) {
      if (operands.at(-1)?.kind === 'literal') return undefined;
      continue;
    }
    s.at = before;
    break;
  }
  const exprEnd = s.at;
  s.skipSpace();
  if (!s.eat('}')) return undefined;
  return { expression: { expr: text.slice(exprStart, exprEnd).trim(), operands }, end: s.at };
}

/** Every path an expression reads: each operand's, and the paths of their dynamic indexes. */
export const pathsOf = (expression: Expression): TemplateRef[] =>
  expression.operands.flatMap((o) => (o.kind === 'path' ? [o.ref, ...(o.ref.dynamic ?? []).map((d) => d.ref)] : []));
