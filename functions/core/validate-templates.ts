import { BATCH_OUTPUT_KEYS } from './batch/batch-config.ts';
import { batchRoots, withIndex } from './batch/batch-items.ts';
import { boundNames } from './bound-inputs.ts';
import { closestMatch } from './closest-match.ts';
import { buildGraph, type WorkflowGraph } from './graph.ts';
import type { Workflow } from './ir.ts';
import { templatedParams } from './nested/workflow-params.ts';
import type { NodeCatalog } from './node-type.ts';
import { findTemplates, formatPath } from './templates.ts';
import { formatIssuePath, type ValidationIssue } from './validation-issue.ts';
import { CALLBACK_KEYS, WAIT_FOR_EVENT_TYPE } from './waits/wait-nodes.ts';

interface Site {
  /** Where the template is, e.g. `Node 'b' param 'command'` or `Output 'loud'`. */
  label: string;
  path: string;
  /** The referencing node; undefined for workflow outputs, which may name any node. */
  nodeId: string | undefined;
  /** Names a batch node's params may use besides inputs and nodes (its item and `__index__`). */
  itemRoots?: readonly string[];
}

/** Checks every template of the workflow's params and outputs against its inputs, nodes and node types. */
const LISTED = 20;

/** Up to LISTED nodes from which a path leads to `nodeId`, for a hint (a bounded walk back). */
function someUpstream(workflow: Workflow, graph: WorkflowGraph, nodeId: string): string[] {
  const found: string[] = [];
  for (const node of workflow.nodes) {
    if (found.length >= LISTED) break;
    if (node.id !== nodeId && graph.reaches(node.id, nodeId)) found.push(node.id);
  }
  return found;
}

const listNames = (names: readonly string[]): string =>
  names.length > LISTED ? `${names.slice(0, LISTED).join(', ')}, … (${names.length - LISTED} more)` : names.join(', ');

export function checkTemplates(workflow: Workflow, catalog: NodeCatalog, graph: WorkflowGraph = buildGraph(workflow)): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const nodeTypes = new Map<string, string>();
  const nodeParams = new Map<string, Record<string, unknown>>();
  for (const node of workflow.nodes) {
    if (nodeTypes.has(node.id)) continue;
    nodeTypes.set(node.id, node.type);
    nodeParams.set(node.id, node.params);
  }
  const inputNames = Object.keys(workflow.inputs);
  const inputSet = new Set(inputNames);
  const nodeIds = [...nodeTypes.keys()];
  const batchNodes = new Set(workflow.nodes.filter((n) => n.batch).map((n) => n.id));
  const loopNodes = new Set(workflow.nodes.filter((n) => n.loop).map((n) => n.id));

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
        if (inputSet.has(ref.root) || site.itemRoots?.includes(ref.root)) continue;
        const close = closestMatch(ref.root, [...inputNames, ...nodeIds]);
        const listing = `Inputs: ${listNames(inputNames) || 'none'}. Nodes: ${listNames(nodeIds)}`;
        const hint =
          close === undefined
            ? `Declare '${ref.root}' under "inputs", or use one of them. ${listing}`
            : `Did you mean \${${formatPath(close, ref.path)}}? ${listing}`;
        issue('TEMPLATE_UNKNOWN_ROOT', `'${ref.root}' is neither a workflow input nor a node id`, hint);
        continue;
      }
      // A wait-for-event node's callback URL is the run's to give, before the node waits: any node may name it.
      if (type === WAIT_FOR_EVENT_TYPE && ref.path.length === 1 && (CALLBACK_KEYS as readonly unknown[]).includes(ref.path[0])) continue;
      if (site.nodeId !== undefined) {
        if (ref.root === site.nodeId) {
          issue('TEMPLATE_SELF_REFERENCE', `node '${site.nodeId}' cannot use its own outputs`, 'Reference an upstream node or an input instead');
        } else if (!graph.reaches(ref.root, site.nodeId)) {
          const upstream = someUpstream(workflow, graph, site.nodeId);
          issue(
            'TEMPLATE_NOT_UPSTREAM',
            `node '${ref.root}' does not run before '${site.nodeId}' (no path of edges leads from '${ref.root}' to '${site.nodeId}')`,
            `Add edges so that '${ref.root}' runs before '${site.nodeId}', or use a node that does: ${upstream.join(', ') || 'none'}`,
          );
        }
      }
      const spec = catalog.get(type);
      const key = ref.path[0];
      // A batch node's outputs are pflow's batch shape, whatever its type's own outputs are; a node type whose outputs
      // depend on its params (a workflow node) says which; undefined: not known before it runs.
      const ownKeys: readonly string[] | undefined = batchNodes.has(ref.root)
        ? BATCH_OUTPUT_KEYS
        : spec?.outputKeysFor
          ? spec.outputKeysFor(nodeParams.get(ref.root) ?? {})
          : spec?.outputKeys;
      // A loop node's last iteration also says why the loop stopped.
      const outputKeys = ownKeys && loopNodes.has(ref.root) ? [...ownKeys, 'loop_stopped'] : ownKeys;
      if (outputKeys === undefined || key === undefined || outputKeys.includes(String(key))) continue;
      const outputs = outputKeys.join(', ');
      const close = typeof key === 'string' ? closestMatch(key, outputKeys) : undefined;
      const fixed = close === undefined ? undefined : `\${${formatPath(ref.root, [close, ...ref.path.slice(1)])}}`;
      issue(
        'TEMPLATE_UNKNOWN_OUTPUT',
        `node '${ref.root}' (${type}) has no output ${typeof key === 'number' ? `[${key}]` : `'${key}'`}`,
        `${fixed === undefined ? '' : `Did you mean ${fixed}? `}Outputs of '${ref.root}': ${outputs}`,
      );
    }
  };

  workflow.nodes.forEach((node, index) => {
    const itemRoots = [...batchRoots(node), ...boundNames(node, catalog.get(node.type))];
    for (const [param, value] of Object.entries(templatedParams(node))) {
      // `${other.results[${__index__}].x}` is checked as `${other.results[0].x}`.
      const checked = node.batch ? withIndex(value, 0) : value;
      check(checked, { label: `Node '${node.id}' param '${param}'`, path: formatIssuePath(['nodes', index, 'params', param]), nodeId: node.id, itemRoots });
    }
    if (node.loop) {
      // The loop's templates read the node's own outputs (its previous iteration), so no upstream check.
      const { while: w, until, carry, max_iterations } = node.loop;
      check([w, until, carry, max_iterations], {
        label: `Node '${node.id}' loop`,
        path: formatIssuePath(['nodes', index, 'loop']),
        nodeId: undefined,
        itemRoots,
      });
    }
    if (typeof node.batch?.items === 'string') {
      check(node.batch.items, { label: `Node '${node.id}' batch.items`, path: formatIssuePath(['nodes', index, 'batch', 'items']), nodeId: node.id });
    }
  });
  for (const [name, output] of Object.entries(workflow.outputs)) {
    check(output.source, { label: `Output '${name}'`, path: formatIssuePath(['outputs', name, 'source']), nodeId: undefined });
  }
  return issues;
}
