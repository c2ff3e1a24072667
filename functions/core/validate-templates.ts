import { closestMatch } from './closest-match.ts';
import type { Workflow } from './ir.ts';
import type { NodeCatalog } from './node-type.ts';
import { findTemplates, formatPath } from './templates.ts';
import { formatIssuePath, type ValidationIssue } from './validation-issue.ts';

/** Nodes from which some path of edges leads to each node (a node in a cycle is its own ancestor). */
export function ancestorsOf(workflow: Workflow): (nodeId: string) => ReadonlySet<string> {
  const predecessors = new Map<string, string[]>();
  for (const edge of workflow.edges) {
    const list = predecessors.get(edge.to) ?? [];
    list.push(edge.from);
    predecessors.set(edge.to, list);
  }
  const memo = new Map<string, Set<string>>();
  return (nodeId) => {
    const known = memo.get(nodeId);
    if (known) return known;
    const seen = new Set<string>();
    const stack = [...(predecessors.get(nodeId) ?? [])];
    while (stack.length > 0) {
      const next = stack.pop() as string;
      if (seen.has(next)) continue;
      seen.add(next);
      stack.push(...(predecessors.get(next) ?? []));
    }
    memo.set(nodeId, seen);
    return seen;
  };
}

interface Site {
  /** Where the template is, e.g. `Node 'b' param 'command'` or `Output 'loud'`. */
  label: string;
  path: string;
  /** The referencing node; undefined for workflow outputs, which may name any node. */
  nodeId: string | undefined;
}

/** Checks every template of the workflow's params and outputs against its inputs, nodes and node types. */
export function checkTemplates(workflow: Workflow, catalog: NodeCatalog): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const nodeTypes = new Map<string, string>();
  for (const node of workflow.nodes) if (!nodeTypes.has(node.id)) nodeTypes.set(node.id, node.type);
  const inputNames = Object.keys(workflow.inputs);
  const nodeIds = [...nodeTypes.keys()];
  const ancestors = ancestorsOf(workflow);

  const check = (value: unknown, site: Site): void => {
    const seen = new Set<string>();
    for (const ref of findTemplates(value)) {
      if (seen.has(ref.expr)) continue;
      seen.add(ref.expr);
      const template = `\${${ref.expr}}`;
      const issue = (code: string, problem: string, hint?: string): void => {
        issues.push({ path: site.path, code, message: `${site.label}: ${template} — ${problem}`, severity: 'error', ...(hint ? { hint } : {}) });
      };
      const type = nodeTypes.get(ref.root);
      if (type === undefined) {
        if (inputNames.includes(ref.root)) continue;
        const close = closestMatch(ref.root, [...inputNames, ...nodeIds]);
        const listing = `Inputs: ${inputNames.join(', ') || 'none'}. Nodes: ${nodeIds.join(', ')}`;
        const hint = close === undefined
          ? `Declare '${ref.root}' under "inputs", or use one of them. ${listing}`
          : `Did you mean \${${formatPath(close, ref.path)}}? ${listing}`;
        issue('TEMPLATE_UNKNOWN_ROOT', `'${ref.root}' is neither a workflow input nor a node id`, hint);
        continue;
      }
      if (site.nodeId !== undefined) {
        if (ref.root === site.nodeId) {
          issue('TEMPLATE_SELF_REFERENCE', `node '${site.nodeId}' cannot use its own outputs`, 'Reference an upstream node or an input instead');
        } else if (!ancestors(site.nodeId).has(ref.root)) {
          const upstream = [...ancestors(site.nodeId)].filter((id) => id !== site.nodeId);
          issue(
            'TEMPLATE_NOT_UPSTREAM',
            `node '${ref.root}' does not run before '${site.nodeId}' (no path of edges leads from '${ref.root}' to '${site.nodeId}')`,
            `Add edges so that '${ref.root}' runs before '${site.nodeId}', or use a node that does: ${upstream.join(', ') || 'none'}`,
          );
        }
      }
      const spec = catalog.get(type);
      const key = ref.path[0];
      if (spec === undefined || key === undefined || spec.outputKeys.includes(String(key))) continue;
      const outputs = spec.outputKeys.join(', ');
      const close = typeof key === 'string' ? closestMatch(key, spec.outputKeys) : undefined;
      const fixed = close === undefined ? undefined : `\${${formatPath(ref.root, [close, ...ref.path.slice(1)])}}`;
      issue(
        'TEMPLATE_UNKNOWN_OUTPUT',
        `node '${ref.root}' (${type}) has no output ${typeof key === 'number' ? `[${key}]` : `'${key}'`}`,
        `${fixed === undefined ? '' : `Did you mean ${fixed}? `}Outputs of '${ref.root}': ${outputs}`,
      );
    }
  };

  workflow.nodes.forEach((node, index) => {
    for (const [param, value] of Object.entries(node.params)) {
      check(value, { label: `Node '${node.id}' param '${param}'`, path: formatIssuePath(['nodes', index, 'params', param]), nodeId: node.id });
    }
  });
  for (const [name, output] of Object.entries(workflow.outputs)) {
    check(output.source, { label: `Output '${name}'`, path: formatIssuePath(['outputs', name, 'source']), nodeId: undefined });
  }
  return issues;
}
