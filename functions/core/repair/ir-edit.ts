import type { Workflow } from '../ir.ts';

/** A change a rule made, as a diff line: `path: before -> after`. */
export interface RuleEdit {
  path: string;
  before: string;
  after: string;
}

export const editLine = (edit: RuleEdit): string => `${edit.path}: ${edit.before} -> ${edit.after}`;

const childPath = (path: string, key: string | number): string => (typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`);

/**
 * Replaces templates `${from}` by `${to}` in every string of `value` (deep); escaped `$${from}` stays.
 * Each replacement is reported once per string it occurs in.
 */
export function replaceTemplates(value: unknown, fixes: ReadonlyMap<string, string>, path: string, edits: RuleEdit[]): unknown {
  if (typeof value === 'string') {
    const seen = new Set<string>();
    const replaced = value.replace(/(\$?)\$\{([^}]*)\}/g, (match, escaped: string, expr: string) => {
      const to = fixes.get(expr);
      if (escaped !== '' || to === undefined) return match;
      if (!seen.has(expr)) edits.push({ path, before: `\${${expr}}`, after: `\${${to}}` });
      seen.add(expr);
      return `\${${to}}`;
    });
    return replaced;
  }
  if (Array.isArray(value)) return value.map((item, i) => replaceTemplates(item, fixes, childPath(path, i), edits));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = replaceTemplates(item, fixes, childPath(path, key), edits);
    return out;
  }
  return value;
}

/** Replaces templates in the params of every node not in `frozen`, and in the workflow's outputs. */
export function replaceTemplatesInWorkflow(
  workflow: Workflow,
  fixes: ReadonlyMap<string, string>,
  frozen: ReadonlySet<string>,
): { ir: Workflow; edits: RuleEdit[] } {
  const edits: RuleEdit[] = [];
  const nodes = workflow.nodes.map((node, i) =>
    frozen.has(node.id) ? node : { ...node, params: replaceTemplates(node.params, fixes, `nodes[${i}].params`, edits) as Record<string, unknown> },
  );
  const outputs: Workflow['outputs'] = {};
  for (const [name, spec] of Object.entries(workflow.outputs)) {
    outputs[name] = { ...spec, source: replaceTemplates(spec.source, fixes, `outputs.${name}.source`, edits) as string };
  }
  return { ir: { ...workflow, nodes, outputs }, edits };
}

/** Renames a param key of node `index`, keeping the order of the other keys. */
export function renameParam(workflow: Workflow, index: number, from: string, to: string): Workflow {
  const nodes = workflow.nodes.map((node, i) => {
    if (i !== index) return node;
    const params: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node.params)) params[key === from ? to : key] = value;
    return { ...node, params };
  });
  return { ...workflow, nodes };
}
