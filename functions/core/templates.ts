import { FlowmendError } from './errors.ts';
import { escapeForJsonata, JsonataContextScanner, TEMPLATE_BINDING_PREFIX } from './jsonata-templates.ts';
import { quoteForShell, type ShellContext, ShellQuotingError } from './shell-quote.ts';
import { ShellContextScanner } from './shell-scanner.ts';
import { type Expression, parseExpressionAt, pathsOf, type TemplateRef } from './template-expr.ts';
import { availablePaths, type TemplateContext, traverseTemplate } from './template-paths.ts';

export type { TemplateRef } from './template-expr.ts';
export { availablePaths, formatPath, type TemplateContext } from './template-paths.ts';

type Part = string | Expression;

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
  whole: Expression | undefined;
}

const PARSE_CACHE_LIMIT = 5000;
const CACHED_TEXT_MAX_CHARS = 10_000;
const parseCache = new Map<string, ParsedText | null>();

/**
 * Splits text into literal parts and `${...}` expressions (paths, `??` chains, dynamic indexes). `$${...}`
 * is the escape: the literal text `${...}`, whatever it holds (pflow's rule: `$${VAR:-x}` reaches a shell
 * as `${VAR:-x}`). A `${` that holds no expression stays as it is.
 */
function parseText(text: string): ParsedText | null {
  if (!text.includes('${')) return null;
  const cached = parseCache.get(text);
  if (cached !== undefined) return cached;
  const parts: Part[] = [];
  const refs: TemplateRef[] = [];
  let literal = '';
  let last = 0;
  let escaped = false;
  for (let at = text.indexOf('${'); at >= 0; at = text.indexOf('${', at)) {
    if (at > 0 && text[at - 1] === '$' && at - 1 >= last) {
      const close = text.indexOf('}', at);
      if (close < 0) break;
      literal += text.slice(last, at - 1) + text.slice(at, close + 1);
      last = close + 1;
      at = last;
      escaped = true;
      continue;
    }
    const parsed = parseExpressionAt(text, at);
    if (!parsed) {
      at += 2;
      continue;
    }
    literal += text.slice(last, at);
    if (literal) parts.push(literal);
    literal = '';
    parts.push(parsed.expression);
    refs.push(...pathsOf(parsed.expression));
    last = parsed.end;
    at = last;
  }
  literal += text.slice(last);
  if (literal) parts.push(literal);
  const only = parts.length === 1 && typeof parts[0] !== 'string' ? (parts[0] as Expression) : undefined;
  const parsed = refs.length === 0 && !escaped ? null : { parts, refs, whole: only };
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
  /** Values that JSONata-quoted text binds as variables, by name. */
  bindings?: Record<string, unknown>;
}

type Found = { ok: true; value: unknown } | { ok: false; reason: string; suggestion?: string };

/** A path's value, its dynamic indexes (`[${x}]`) first resolved to integers. */
function findPath(ref: TemplateRef, state: Resolution): Found {
  let target = ref;
  if (ref.dynamic) {
    const path = [...ref.path];
    for (const { at, ref: inner } of ref.dynamic) {
      const found = findPath(inner, state);
      if (!found.ok) return { ok: false, reason: `its index \${${inner.expr}}: ${found.reason}` };
      const index = typeof found.value === 'string' && /^\d+$/.test(found.value) ? Number(found.value) : found.value;
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0) {
        return { ok: false, reason: `its index \${${inner.expr}} is ${JSON.stringify(found.value)}, not a whole number of 0 or more` };
      }
      path[at] = index;
    }
    target = { ...ref, path };
  }
  return traverseTemplate(target, state.context, state.jsonCache);
}

/**
 * An expression's value: a path, or the first operand of a `??` chain that is present (pflow's rule: a
 * node that did not run, a node that failed, a missing field are absent; a found null ends the chain).
 */
function resolveRef(expression: Expression, state: Resolution): { ok: true; value: unknown } | { ok: false } {
  const chain = expression.operands.length > 1;
  let last: Found = { ok: false, reason: 'nothing to resolve' };
  for (const operand of expression.operands) {
    if (operand.kind === 'literal') return { ok: true, value: operand.value };
    if (chain && state.context.failed?.has(operand.ref.root)) {
      last = { ok: false, reason: `node '${operand.ref.root}' failed, so it is absent to '??'` };
      continue;
    }
    last = findPath(operand.ref, state);
    if (last.ok) return last;
  }
  const template = `\${${expression.expr}}`;
  const reason = chain ? `no operand is present (the last: ${last.ok ? '' : last.reason})` : last.ok ? '' : last.reason;
  if (!state.problems.some((p) => p.template === template && p.param === state.param)) {
    const suggestion = !chain && !last.ok ? last.suggestion : undefined;
    state.problems.push({ template, param: state.param, reason, ...(suggestion ? { suggestion } : {}) });
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
  const firstBroken = problems[0]?.template.slice(2, -1).split('??')[0]?.trim();
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
 * `jsonata`: each value is a variable (in `bindings`) where it stands as code, escaped text in a literal.
 */
export type TextQuoting = 'shell' | 'jsonata';
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
    let where: ShellContext;
    try {
      where = scanner.context();
    } catch (error) {
      if (!(error instanceof ShellQuotingError)) throw error;
      state.problems.push({ template: `\${${part.expr}}`, param: state.param, reason: error.message });
      continue;
    }
    const r = resolveRef(part, state);
    scanner.feedValue();
    if (!r.ok) continue;
    try {
      out += quoteForShell(stringifyForText(r.value), where);
    } catch (error) {
      if (!(error instanceof ShellQuotingError)) throw error;
      state.problems.push({ template: `\${${part.expr}}`, param: state.param, reason: error.message });
    }
  }
  return out;
}

function resolveJsonataText(text: string, state: Resolution): string {
  const parsed = parseText(text);
  if (!parsed) return text;
  const scanner = new JsonataContextScanner();
  let out = '';
  for (const part of parsed.parts) {
    if (typeof part === 'string') {
      scanner.feed(part);
      out += part;
      continue;
    }
    const where = scanner.context();
    const r = resolveRef(part, state);
    scanner.feedValue();
    if (!r.ok) continue;
    if (where === 'name') {
      const reason = 'a template inside a `backtick` field name cannot be escaped: use $lookup($, ${...}) instead';
      state.problems.push({ template: `\${${part.expr}}`, param: state.param, reason });
    } else if (where === 'string') out += escapeForJsonata(stringifyForText(r.value));
    else {
      state.bindings ??= {};
      const name = `${TEMPLATE_BINDING_PREFIX}${Object.keys(state.bindings).length}`;
      state.bindings[name] = r.value;
      out += `$${name}`;
    }
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
    const how = Object.hasOwn(quoting, key) && typeof value === 'string' ? quoting[key] : undefined;
    const resolved =
      how === 'shell' ? resolveShellText(value as string, state) : how === 'jsonata' ? resolveJsonataText(value as string, state) : resolveDeep(value, state);
    defineEntry(out, key, resolved);
  }
  failIfUnresolved(state);
  // The values a JSONata text binds join the node's own `bindings` (which name no variable of ours).
  const own = out.bindings;
  if (state.bindings !== undefined && (own === undefined || (own !== null && typeof own === 'object' && !Array.isArray(own)))) {
    out.bindings = { ...(own as object | undefined), ...state.bindings };
  }
  return out;
}
