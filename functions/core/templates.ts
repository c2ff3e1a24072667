import { FlowmendError } from './errors.ts';
import { quoteForShell, ShellContextScanner, ShellQuotingError } from './shell-quote.ts';
import { availablePaths, type TemplateContext, traverseTemplate } from './template-paths.ts';

export { availablePaths, formatPath, type TemplateContext } from './template-paths.ts';

/** A template reference; `expr` is the text inside `${...}`. */
export interface TemplateRef {
  expr: string;
  root: string;
  path: (string | number)[];
}

const NAME = '[a-zA-Z_][\\w-]*';
const EXPR = `${NAME}(?:\\[\\d+\\])*(?:\\.${NAME}(?:\\[\\d+\\])*)*`;
/** `${expr}`, or the escape `$${expr}` (a literal `${expr}`). */
const TOKEN = new RegExp(`\\$?\\$\\{(${EXPR})\\}`, 'g');
const SEGMENT = /[^.[\]]+|\[(\d+)\]/g;

type Part = string | TemplateRef;

/** Sets an own property, even one named `__proto__` (plain assignment would replace the prototype instead). */
const defineEntry = (target: Record<string, unknown>, key: string, value: unknown): void => {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
};

/** A string holding templates or escapes, split once and cached: params are resolved on every step. */
interface ParsedText {
  parts: Part[];
  refs: TemplateRef[];
  /** Set when the whole string is one template, whose value then keeps its type. */
  whole: TemplateRef | undefined;
}

const PARSE_CACHE_LIMIT = 5000;
const CACHED_TEXT_MAX_CHARS = 10_000;
const parseCache = new Map<string, ParsedText | null>();

function parseRef(expr: string): TemplateRef {
  const segments: (string | number)[] = [];
  for (const m of expr.matchAll(SEGMENT)) segments.push(m[1] === undefined ? m[0] : Number(m[1]));
  const [root, ...path] = segments;
  return { expr, root: root as string, path };
}

function parseText(text: string): ParsedText | null {
  if (!text.includes('${')) return null;
  const cached = parseCache.get(text);
  if (cached !== undefined) return cached;
  const parts: Part[] = [];
  const refs: TemplateRef[] = [];
  let literal = '';
  let last = 0;
  let escaped = false;
  for (const m of text.matchAll(TOKEN)) {
    literal += text.slice(last, m.index);
    last = m.index + m[0].length;
    const expr = m[1] as string;
    if (m[0].startsWith('$$')) {
      literal += `\${${expr}}`;
      escaped = true;
      continue;
    }
    if (literal) parts.push(literal);
    literal = '';
    const ref = parseRef(expr);
    parts.push(ref);
    refs.push(ref);
  }
  literal += text.slice(last);
  if (literal) parts.push(literal);
  const parsed = refs.length === 0 && !escaped ? null : { parts, refs, whole: parts.length === 1 && refs.length === 1 ? refs[0] : undefined };
  if (text.length <= CACHED_TEXT_MAX_CHARS) {
    if (parseCache.size >= PARSE_CACHE_LIMIT) parseCache.clear();
    parseCache.set(text, parsed);
  }
  return parsed;
}

/** Every template in a value (deep), in order of appearance; escaped `$${x}` ones are not templates. */
export function findTemplates(value: unknown): TemplateRef[] {
  const found: TemplateRef[] = [];
  const visit = (v: unknown): void => {
    if (typeof v === 'string') {
      const parsed = parseText(v);
      if (parsed) found.push(...parsed.refs);
    } else if (Array.isArray(v)) {
      for (const item of v) visit(item);
    } else if (v !== null && typeof v === 'object') {
      for (const item of Object.values(v)) visit(item);
    }
  };
  visit(value);
  return found;
}

/** How a value reads inside text: strings as-is, null as "", objects and arrays as compact JSON. */
export function stringifyForText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** One template that did not resolve, and why. */
export interface TemplateProblem {
  template: string;
  param: string | undefined;
  reason: string;
  /** The template with its broken segment replaced by the closest key, when one is close. */
  suggestion?: string;
}

export class TemplateResolutionError extends FlowmendError {
  override readonly name = 'TemplateResolutionError';
  readonly code = 'TEMPLATE_UNRESOLVED';
}

interface Resolution {
  context: TemplateContext;
  jsonCache: Map<string, unknown>;
  problems: TemplateProblem[];
  param: string | undefined;
}

function resolveRef(ref: TemplateRef, state: Resolution): { ok: true; value: unknown } | { ok: false } {
  const result = traverseTemplate(ref, state.context, state.jsonCache);
  if (result.ok) return result;
  const template = `\${${ref.expr}}`;
  if (!state.problems.some((p) => p.template === template && p.param === state.param)) {
    state.problems.push({ template, param: state.param, reason: result.reason, ...(result.suggestion ? { suggestion: result.suggestion } : {}) });
  }
  return { ok: false };
}

function resolveDeep(value: unknown, state: Resolution): unknown {
  if (typeof value === 'string') {
    const parsed = parseText(value);
    if (!parsed) return value;
    if (parsed.whole) {
      const r = resolveRef(parsed.whole, state);
      return r.ok ? r.value : value;
    }
    let text = '';
    for (const part of parsed.parts) {
      if (typeof part === 'string') text += part;
      else {
        const r = resolveRef(part, state);
        if (r.ok) text += stringifyForText(r.value);
      }
    }
    return text;
  }
  if (Array.isArray(value)) return value.map((item) => resolveDeep(item, state));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) defineEntry(out, k, resolveDeep(v, state));
    return out;
  }
  return value;
}

function failIfUnresolved(state: Resolution): void {
  const { problems, context } = state;
  if (problems.length === 0) return;
  const firstBroken = problems[0]?.template.slice(2, -1);
  const available = availablePaths(context, firstBroken === undefined ? {} : { near: firstBroken });
  const lines = problems.map((p) => `  ${p.param === undefined ? '' : `param '${p.param}': `}${p.template} — ${p.reason}`);
  const heading = problems.length === 1 ? 'Unresolved template' : `${problems.length} unresolved templates`;
  const params = [...new Set(problems.flatMap((p) => (p.param === undefined ? [] : [p.param])))];
  const availableText = available.length === 0 ? '(nothing: no inputs and no node outputs yet)' : available.join(', ');
  throw new TemplateResolutionError(`${heading}:\n${lines.join('\n')}\nAvailable paths: ${availableText}`, {
    details: { unresolved: [...new Set(problems.map((p) => p.template))], params, available, problems },
  });
}

/**
 * How a param's text quotes the values substituted into it. `shell`: each value is quoted for where it
 * stands in a `sh -c` command (bare word, "...", '...', backticks), so it is always one piece of data.
 */
export type TextQuoting = 'shell';
export type ParamQuoting = Readonly<Record<string, TextQuoting>>;

function resolveShellText(text: string, state: Resolution): string {
  const parsed = parseText(text);
  if (!parsed) return text;
  const scanner = new ShellContextScanner();
  let out = '';
  for (const part of parsed.parts) {
    if (typeof part === 'string') {
      scanner.feed(part);
      out += part;
      continue;
    }
    let where: ReturnType<ShellContextScanner['context']>;
    try {
      where = scanner.context();
    } catch (error) {
      if (!(error instanceof ShellQuotingError)) throw error;
      state.problems.push({ template: `\${${part.expr}}`, param: state.param, reason: error.message });
      continue;
    }
    const r = resolveRef(part, state);
    scanner.feedValue();
    if (r.ok) out += quoteForShell(stringifyForText(r.value), where);
  }
  return out;
}

const newState = (context: TemplateContext, param?: string): Resolution => ({ context, jsonCache: new Map(), problems: [], param });

/** Resolves every template in a value (deep). Throws `TemplateResolutionError` naming each unresolved one. */
export function resolveValue(value: unknown, context: TemplateContext): unknown {
  const state = newState(context);
  const resolved = resolveDeep(value, state);
  failIfUnresolved(state);
  return resolved;
}

/** Resolves a node's params; the error names every unresolved template and the param it is in. */
export function resolveParams(params: Record<string, unknown>, context: TemplateContext, quoting: ParamQuoting = {}): Record<string, unknown> {
  const state = newState(context);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params)) {
    state.param = key;
    const quoted = Object.hasOwn(quoting, key) && typeof value === 'string';
    defineEntry(out, key, quoted ? resolveShellText(value, state) : resolveDeep(value, state));
  }
  failIfUnresolved(state);
  return out;
}
