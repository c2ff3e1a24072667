import { closestMatch } from '../../core/index.ts';
import { MarkdownError } from './markdown-error.ts';
import type { MarkdownWarning } from './markdown-lines.ts';

/** What a step says about where the run goes after it. */
export interface Routing {
  id: string;
  line: number;
  /** `- next:` as written (`end`, an id, or `a, b, c`), with its line. */
  next?: { value: string; line: number };
  onError?: { value: string; line: number };
  /** Targets of `next = "literal"` in a code node's Python, and whether it also sets `next` to an expression. */
  codeTargets: string[];
  dynamicNext: boolean;
}

export interface MarkdownEdge {
  from: string;
  to: string;
  action: string;
  /** An edge of document order (pflow writes it without an action). */
  byOrder?: true;
  line: number;
}

const LITERAL_NEXT = /^\s*next\s*(?::\s*[^=]+?)?\s*=\s*(["'])([^"'\\]*)\1\s*(?:#.*)?$/;
const ANY_NEXT = /^\s*next\s*(?::\s*[^=]+?)?\s*=(?!=)/;

/** `next = "id"` assignments in a code node's Python (pflow finds them in its AST; a line-level reading finds the same ones). */
export const nextTargetsInCode = (code: string): { targets: string[]; dynamic: boolean } => {
  const targets: string[] = [];
  let dynamic = false;
  for (const line of code.split('\n')) {
    const literal = LITERAL_NEXT.exec(line);
    if (literal) {
      const target = literal[2] as string;
      if (target !== 'end' && !targets.includes(target)) targets.push(target);
    } else if (ANY_NEXT.test(line)) dynamic = true;
  }
  return { targets, dynamic };
};

const targetsOf = (value: string): string[] =>
  value
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean);

/**
 * The edges pflow compiles from step order, `- next:` (`end`, one id, or several: each its own action,
 * the first also `default`), `- on-error:` and a code node's literal `next`; then pflow's routing checks:
 * targets exist, `end` is no id, a dynamic `next` declares its targets, a branch target says where it
 * goes, and no step falls into a branch target by document order. pflow refuses the last two; they are
 * warnings here, so that workflows written before pflow checked them (its own examples among them) run,
 * falling through as their edges say. Throws MarkdownError.
 */
export const buildEdges = (steps: readonly Routing[], warnings: MarkdownWarning[]): MarkdownEdge[] => {
  const ids = steps.map((s) => s.id);
  const edges: MarkdownEdge[] = [];
  const at = new Map(steps.map((s) => [s.id, s.line]));
  if (ids.includes('end') || ids.includes('__end__')) {
    const id = ids.includes('end') ? 'end' : '__end__';
    throw new MarkdownError(
      at.get(id) ?? 1,
      5,
      `'${id}' is reserved (it ends the run in "- next: end") and cannot be a step id`,
      'Rename the step, e.g. "finish" or "done"',
    );
  }
  steps.forEach((step, i) => {
    if (step.next !== undefined) {
      const real = targetsOf(step.next.value).filter((t) => t !== 'end');
      if (real.length === 1) edges.push({ from: step.id, to: real[0] as string, action: 'default', line: step.next.line });
      else if (real.length > 1) {
        for (const t of real) edges.push({ from: step.id, to: t, action: t, line: step.next.line });
        edges.push({ from: step.id, to: real[0] as string, action: 'default', line: step.next.line });
      }
    } else if (i < steps.length - 1) edges.push({ from: step.id, to: (steps[i + 1] as Routing).id, action: 'default', byOrder: true, line: step.line });
    if (step.onError !== undefined) edges.push({ from: step.id, to: step.onError.value.trim(), action: 'error', line: step.onError.line });
    for (const target of step.codeTargets) {
      if (!edges.some((e) => e.from === step.id && e.action === target)) edges.push({ from: step.id, to: target, action: target, line: step.line });
    }
  });
  for (const edge of edges) {
    if (ids.includes(edge.to)) continue;
    const close = closestMatch(edge.to, ids);
    throw new MarkdownError(
      edge.line,
      1,
      `step '${edge.from}' leads to '${edge.to}', which is not a step`,
      `${close ? `Did you mean '${close}'? ` : ''}Steps: ${ids.join(', ')}; "end" ends the run`,
    );
  }
  checkBranches(steps, edges, warnings);
  return edges;
};

function checkBranches(steps: readonly Routing[], edges: readonly MarkdownEdge[], warnings: MarkdownWarning[]): void {
  const byId = new Map(steps.map((s) => [s.id, s]));
  for (const step of steps) {
    if (step.dynamicNext && step.next === undefined) {
      throw new MarkdownError(
        step.line,
        1,
        `step '${step.id}' sets next to an expression in its code but has no "- next:" listing where it may go`,
        `Add "- next: a, b" naming every step its code may choose`,
      );
    }
  }
  const routers = new Map<string, Set<string>>();
  for (const e of edges) if (e.action !== 'default') routers.set(e.to, new Set([...(routers.get(e.to) ?? []), e.from]));
  for (const [target, from] of [...routers].sort(([a], [b]) => a.localeCompare(b))) {
    const step = byId.get(target) as Routing;
    if (step.next !== undefined) continue;
    const order = edges.find((e) => e.byOrder && e.from === target)?.to;
    if (order === undefined) continue;
    warnings.push({
      line: step.line,
      message:
        `step '${target}' is a branch target of ${[...from].map((f) => `'${f}'`).join(', ')} but has no "- next:"` +
        `, so it falls through to '${order}' by document order (pflow refuses this)`,
      hint: `Say where the branch goes: "- next: ${routers.has(order) ? 'end' : order}" (or "- next: end" to end the run there)`,
    });
  }
  for (const e of edges) {
    const from = routers.get(e.to);
    if (!e.byOrder || !from || from.has(e.from)) continue;
    warnings.push({
      line: byId.get(e.from)?.line ?? e.line,
      message: `step '${e.from}' falls into '${e.to}' by document order, but '${e.to}' is a branch target of ${[...from].map((f) => `'${f}'`).join(', ')} (pflow refuses this)`,
      hint: `Give '${e.from}' a "- next:" (the step where the branches meet, or "end")`,
    });
  }
}
