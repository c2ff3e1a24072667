import type jsonata from 'jsonata';

/**
 * Which JSONata expressions the transform node evaluates in the caller's thread instead of a worker
 * (jsonata-worker.ts): those whose work and result are bounded by (expression size) x (input size), so
 * that none can block the event loop or take the host's memory. Decided from JSONata's own parsed AST,
 * by an allowlist; anything not on it (regexes, ranges, lambdas, `:=`, `$$`, `%`, `@`/`#`, sort, group,
 * higher-order and unlisted functions) goes to the worker. The bound rests on four rules:
 * - a sequence is mapped over only when it is made of navigation (names, `$`, one variable): its
 *   items are disjoint parts of the input, so a step or a filter evaluated per item costs in total
 *   (its size) x (input size); a built value (`[$, $]`, `{"a": x & x}`) is never stepped into again,
 *   since doubling it step after step would grow as 2^steps;
 * - a binding read once per item (inside a step or a filter) must be a scalar or a short string, as
 *   `items.[$big]` would copy it once per item;
 * - each allowed function returns no more than its arguments plus constants, in time linear in them;
 * - an object constructor is evaluated once, at the top (JSONata groups an array context, quadratically).
 */

/** Built-ins whose result is no bigger than their arguments plus constants ($string without prettify; $join with a literal separator). */
const BOUNDED_FUNCTIONS = new Set([
  'string',
  'number',
  'boolean',
  'not',
  'exists',
  'count',
  'sum',
  'max',
  'min',
  'average',
  'length',
  'uppercase',
  'lowercase',
  'trim',
  'substring',
  'keys',
  'lookup',
  'type',
  'join',
  'append',
  'merge',
  'round',
  'floor',
  'ceil',
  'abs',
]);
const BINARY_OPERATORS = new Set(['+', '-', '*', '/', '%', '=', '!=', '<', '<=', '>', '>=', '&', 'and', 'or', 'in']);
/** A binding read once per item is copied or compared once per item: up to this many characters of text. */
const MAX_PER_ITEM_TEXT = 256;

type Node = Readonly<Record<string, unknown>>;
type Scope = 'once' | 'item';

/** What evaluating an allowed expression in the caller's thread still asks of the bindings it is given. */
export interface InlinePlan {
  /** Bindings read once per evaluation: any JSON value. */
  readonly once: ReadonlySet<string>;
  /** Bindings read once per item of a sequence: scalars and short strings only. */
  readonly perItem: ReadonlySet<string>;
  /** Built-ins it calls: a binding of the same name would shadow one. */
  readonly functions: ReadonlySet<string>;
}

const COMMON_KEYS = new Set(['type', 'value', 'position']);
/** Keys JSONata leaves `undefined` (a function node's `name`) say nothing. */
const hasOnly = (node: Node, keys: readonly string[]): boolean =>
  Object.entries(node).every(([key, value]) => value === undefined || COMMON_KEYS.has(key) || keys.includes(key));
const nodesOf = (value: unknown): Node[] | undefined =>
  Array.isArray(value) && value.every((item) => typeof item === 'object' && item !== null) ? (value as Node[]) : undefined;

class Classifier {
  readonly once = new Set<string>();
  readonly perItem = new Set<string>();
  readonly functions = new Set<string>();

  expression(node: Node, scope: Scope): boolean {
    switch (node.type) {
      case 'string':
      case 'number':
      case 'value':
        return hasOnly(node, []);
      case 'name':
      case 'variable':
        return this.navigation(node, scope, true);
      case 'path':
        return this.path(node, scope);
      case 'unary':
        return this.unary(node, scope);
      case 'binary':
        return hasOnly(node, ['lhs', 'rhs']) && BINARY_OPERATORS.has(node.value as string) && this.all([node.lhs, node.rhs], scope);
      case 'condition':
        return hasOnly(node, ['condition', 'then', 'else']) && this.all([node.condition, node.then, ...(node.else === undefined ? [] : [node.else])], scope);
      case 'block':
        return hasOnly(node, ['expressions']) && this.all(node.expressions, scope);
      case 'function':
        return this.call(node, scope);
      default:
        return false;
    }
  }

  /**
   * A name, `$` or a binding, with filters evaluated per item; a binding only where `variableAllowed`. Not `*`:
   * JSONata appends each array-valued field by copying what it gathered so far (20,000 such fields: 4 s).
   */
  private navigation(node: Node, scope: Scope, variableAllowed: boolean): boolean {
    if (!hasOnly(node, ['stages', 'predicate', 'keepArray'])) return false;
    if (node.type === 'variable') {
      if (node.value === '$') return false;
      if (node.value !== '') {
        if (!variableAllowed || typeof node.value !== 'string') return false;
        (scope === 'once' ? this.once : this.perItem).add(node.value);
      }
    } else if (node.type !== 'name') return false;
    for (const key of ['stages', 'predicate'] as const) {
      if (node[key] === undefined) continue;
      const filters = nodesOf(node[key]);
      if (filters === undefined) return false;
      for (const filter of filters) {
        if (filter.type !== 'filter' || !hasOnly(filter, ['expr']) || !this.all([filter.expr], 'item')) return false;
      }
    }
    return true;
  }

  /** Steps before the last are navigation; the last may build a value, once per item of what came before. */
  private path(node: Node, scope: Scope): boolean {
    const steps = nodesOf(node.steps);
    if (!hasOnly(node, ['steps', 'keepSingletonArray']) || steps === undefined || steps.length === 0) return false;
    return steps.every((step, index) => {
      const perItem = index > 0 || step.type !== 'variable' ? 'item' : scope;
      if (step.type === 'name' || step.type === 'variable') {
        return this.navigation(step, perItem, index === 0 || index === steps.length - 1);
      }
      return index === steps.length - 1 && this.expression(step, 'item');
    });
  }

  private unary(node: Node, scope: Scope): boolean {
    switch (node.value) {
      case '-':
        return hasOnly(node, ['expression']) && this.all([node.expression], scope);
      case '[':
        return hasOnly(node, ['expressions', 'consarray']) && this.all(node.expressions, scope);
      case '{': {
        // Per item, an object constructor groups the item's elements when the item is an array, appending
        // each to its group by copying it: `a.{"x": 1}` over a 40,000-number array nested in `a` took 34 s.
        const pairs = node.lhs;
        if (scope === 'item' || !hasOnly(node, ['lhs']) || !Array.isArray(pairs)) return false;
        return pairs.every((pair) => Array.isArray(pair) && pair.length === 2 && this.all(pair, scope));
      }
      default:
        return false;
    }
  }

  private call(node: Node, scope: Scope): boolean {
    const procedure = node.procedure as Node | undefined;
    const args = nodesOf(node.arguments);
    if (!hasOnly(node, ['procedure', 'arguments']) || args === undefined || procedure?.type !== 'variable' || !hasOnly(procedure, [])) return false;
    const name = procedure.value;
    if (typeof name !== 'string' || !BOUNDED_FUNCTIONS.has(name)) return false;
    // $string's second argument indents: up to depth x size on a deep input. $join's separator is repeated per item.
    if (name === 'string' && args.length > 1) return false;
    if (name === 'join' && args[1] !== undefined && args[1].type !== 'string') return false;
    this.functions.add(name);
    return this.all(args, scope);
  }

  private all(nodes: unknown, scope: Scope): boolean {
    return nodesOf(nodes)?.every((item) => this.expression(item, scope)) ?? false;
  }
}

/** The plan for an expression JSONata parsed, or `null` when it must go to the worker. */
export const inlinePlanOf = (ast: jsonata.ExprNode): InlinePlan | null => {
  const classifier = new Classifier();
  if (!classifier.expression(ast as unknown as Node, 'once')) return null;
  return { once: classifier.once, perItem: classifier.perItem, functions: classifier.functions };
};

const isSmall = (value: unknown): boolean =>
  value === null || typeof value === 'number' || typeof value === 'boolean' || (typeof value === 'string' && value.length <= MAX_PER_ITEM_TEXT);

/** Whether these bindings keep an allowed expression's bound: each variable bound, no built-in shadowed. */
export const bindingsFit = (plan: InlinePlan, bindings: Readonly<Record<string, unknown>>): boolean => {
  for (const name of plan.functions) if (Object.hasOwn(bindings, name)) return false;
  for (const name of plan.once) if (!Object.hasOwn(bindings, name)) return false;
  for (const name of plan.perItem) if (!Object.hasOwn(bindings, name) || !isSmall(bindings[name])) return false;
  return true;
};
