import { didYouMean } from './closest-match.ts';
import { FILE_NODE_TYPES, FILE_NODES_LOCAL_ONLY } from './file-node-types.ts';
import { checkFlowControl } from './flow/validate-flow.ts';
import { buildGraph, type WorkflowGraph } from './graph.ts';
import { startNodeId, type Workflow, type WorkflowNode } from './ir.ts';
import { MCP_TYPE, plainTextSecrets } from './mcp-servers.ts';
import { checkWorkflowNodes, type Nesting, TOP_LEVEL } from './nested/validate-children.ts';
import type { NodeCatalog, NodeTypeSpec } from './node-type.ts';
import { pflowAlternative } from './pflow-compat.ts';
import { checkSensitiveHeaders } from './sensitive-headers.ts';
import { findTemplates } from './templates.ts';
import { checkPflowFeatures } from './validate-pflow-features.ts';
import { checkQuoting } from './validate-quoting.ts';
import { checkTemplates } from './validate-templates.ts';
import { issueError as error, formatIssuePath, type ValidationIssue, issueWarning as warning } from './validation-issue.ts';
import { checkWaits } from './waits/validate-waits.ts';
import * as z from './zod.ts';

export { closestMatch } from './closest-match.ts';
export { parseWorkflow } from './parse-workflow.ts';
export { formatIssues, type ValidationIssue, ValidationIssueSchema } from './validation-issue.ts';

/** Whether a params schema rejects keys it does not declare (a catch-all schema accepts any). */
const acceptsUnknownParams = (spec: NodeTypeSpec): boolean => {
  const catchall = spec.paramsSchema._zod.def.catchall;
  return catchall !== undefined && catchall._zod.def.type !== 'never';
};

function checkParams(node: WorkflowNode, index: number, spec: NodeTypeSpec): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const shape = spec.paramsSchema.shape;
  const known = Object.keys(shape);
  const where = `Node '${node.id}' (${spec.type})`;
  const paramPath = (param: string, rest: readonly PropertyKey[] = []): string => formatIssuePath(['nodes', index, 'params', param, ...rest]);
  for (const [param, value] of Object.entries(node.params)) {
    const schema = shape[param];
    // pflow's `inputs:` on any node: names for its templates (bound-inputs.ts), not a param of its type.
    if (schema === undefined && param === 'inputs' && value !== null && typeof value === 'object' && !Array.isArray(value)) continue;
    if (schema === undefined) {
      if (!acceptsUnknownParams(spec)) {
        issues.push(
          error(
            paramPath(param),
            'UNKNOWN_PARAM',
            `${where}: unknown param '${param}'`,
            `${didYouMean(param, known)}Params of ${spec.type}: ${known.join(', ')}`,
          ),
        );
      }
      continue;
    }
    if (findTemplates(value).length > 0) continue;
    const parsed = z.safeParse(schema, value);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      const detail = (first?.message ?? 'invalid value').replace(/^Invalid input: /, '');
      issues.push(error(paramPath(param, first?.path ?? []), 'INVALID_PARAM', `Node '${node.id}' param '${param}': ${detail}`));
    }
  }
  for (const param of known) {
    if (Object.hasOwn(node.params, param)) continue;
    const paramSchema = shape[param];
    const absent = paramSchema === undefined ? undefined : z.safeParse(paramSchema, undefined);
    if (absent !== undefined && !absent.success) {
      const own = absent.error.issues[0]?.message;
      const hint = own === undefined || own.startsWith('Invalid') ? `Add "${param}" to the node's params` : own;
      issues.push(error(paramPath(param), 'MISSING_PARAM', `${where}: missing required param '${param}'`, hint));
    }
  }
  return issues;
}

function checkNodes(workflow: Workflow, catalog: NodeCatalog): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const firstIndex = new Map<string, number>();
  const knownTypes = [...catalog.keys()];
  workflow.nodes.forEach((node, index) => {
    const earlier = firstIndex.get(node.id);
    if (earlier === undefined) firstIndex.set(node.id, index);
    else
      issues.push(
        error(
          `nodes[${index}].id`,
          'DUPLICATE_NODE_ID',
          `Node id '${node.id}' is used twice (nodes[${earlier}] and nodes[${index}])`,
          'Give every node its own id',
        ),
      );
    const spec = catalog.get(node.type);
    const alternative = spec !== undefined ? undefined : FILE_NODE_TYPES.has(node.type) ? FILE_NODES_LOCAL_ONLY : pflowAlternative(node.type);
    if (alternative !== undefined) {
      issues.push(
        error(
          `nodes[${index}].type`,
          'UNSUPPORTED_NODE_TYPE',
          `Node '${node.id}' has type '${node.type}': ${alternative}`,
          `Known types: ${knownTypes.join(', ')}`,
        ),
      );
    } else if (spec === undefined) {
      issues.push(
        error(
          `nodes[${index}].type`,
          'UNKNOWN_NODE_TYPE',
          `Node '${node.id}' has unknown type '${node.type}'`,
          `${didYouMean(node.type, knownTypes)}Known types: ${knownTypes.join(', ')}`,
        ),
      );
    } else {
      issues.push(...checkParams(node, index, spec));
    }
  });
  return issues;
}

const LISTED = 20;
const listIds = (ids: readonly string[]): string =>
  ids.length > LISTED ? `${ids.slice(0, LISTED).join(', ')}, … (${ids.length - LISTED} more)` : ids.join(', ');

function checkGraph(workflow: Workflow, graph: WorkflowGraph): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const ids = workflow.nodes.map((n) => n.id);
  const idSet = new Set(ids);
  const firstEdge = new Map<string, number>();
  workflow.edges.forEach((edge, index) => {
    for (const end of ['from', 'to'] as const) {
      if (!idSet.has(edge[end])) {
        issues.push(
          error(
            `edges[${index}].${end}`,
            'EDGE_UNKNOWN_NODE',
            `Edge ${index} ${end === 'from' ? 'starts at' : 'leads to'} unknown node '${edge[end]}'`,
            `${didYouMean(edge[end], ids)}Nodes: ${listIds(ids)}`,
          ),
        );
      }
    }
    const key = JSON.stringify([edge.from, edge.action]);
    const earlier = firstEdge.get(key);
    if (earlier === undefined) firstEdge.set(key, index);
    else {
      issues.push(
        error(
          `edges[${index}].action`,
          'AMBIGUOUS_EDGE',
          `Node '${edge.from}' has two '${edge.action}' edges (edges[${earlier}] and edges[${index}]); an action must lead to one node`,
          'Remove one edge, or give it another action',
        ),
      );
    }
  });
  if (workflow.start_node !== undefined && !idSet.has(workflow.start_node)) {
    issues.push(
      error(
        'start_node',
        'UNKNOWN_START_NODE',
        `start_node '${workflow.start_node}' is not a node`,
        `${didYouMean(workflow.start_node, ids)}Nodes: ${listIds(ids)}`,
      ),
    );
    return issues;
  }
  const start = startNodeId(workflow);
  const reached = new Set([start]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    for (const next of graph.successors.get(queue[head] as string) ?? []) {
      if (!reached.has(next)) {
        reached.add(next);
        queue.push(next);
      }
    }
  }
  workflow.nodes.forEach((node, index) => {
    if (!reached.has(node.id)) {
      issues.push(
        warning(
          `nodes[${index}]`,
          'UNREACHABLE_NODE',
          `Node '${node.id}' cannot be reached from the start node '${start}'`,
          `Add an edge that leads to '${node.id}', or remove it`,
        ),
      );
    }
  });
  const indexOf = new Map(workflow.nodes.map((node, index) => [node.id, index]));
  for (const cycle of graph.cyclesWithoutExit()) {
    const ordered = cycle.toSorted((a, b) => (indexOf.get(a) ?? 0) - (indexOf.get(b) ?? 0));
    issues.push(
      warning(
        `nodes[${indexOf.get(ordered[0] as string)}]`,
        'CYCLE_WITHOUT_EXIT',
        `Nodes ${listIds(ordered.map((id) => `'${id}'`))} form a cycle with no exit: every node's default action leads back into it, so the run only ends on an error or the node visit limit`,
        'Give one node of the cycle an edge out of it (or a default action with no edge, which ends the run)',
      ),
    );
  }
  return issues;
}

function checkInputs(workflow: Workflow): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const ids = new Set(workflow.nodes.map((n) => n.id));
  for (const [name, spec] of Object.entries(workflow.inputs)) {
    const path = formatIssuePath(['inputs', name]);
    if (ids.has(name)) {
      issues.push(
        error(path, 'INPUT_NODE_NAME_CLASH', `Input '${name}' has the same name as a node, so \${${name}} would be ambiguous`, 'Rename the input or the node'),
      );
    }
    if (spec.required === true && spec.default !== undefined) {
      issues.push(
        warning(
          path,
          'REQUIRED_INPUT_WITH_DEFAULT',
          `Input '${name}' is required but has a default, which is never used`,
          'Remove "required": true, or the default',
        ),
      );
    }
  }
  return issues;
}

/** The mcp nodes whose server the workflow does not declare (nor a config file gave it). */
export const unconfiguredMcpServers = (workflow: Workflow): { nodeId: string; index: number; server: string }[] =>
  workflow.nodes.flatMap((node, index) => {
    const server = node.type === MCP_TYPE ? node.params.server : undefined;
    return typeof server === 'string' && !Object.hasOwn(workflow.mcp_servers ?? {}, server) ? [{ nodeId: node.id, index, server }] : [];
  });

function checkMcpServers(workflow: Workflow): ValidationIssue[] {
  const issues: ValidationIssue[] = unconfiguredMcpServers(workflow).map(({ nodeId, index, server }) =>
    warning(
      `nodes[${index}].params.server`,
      'MCP_SERVER_NOT_CONFIGURED',
      `Node '${nodeId}' calls MCP server '${server}', which is not configured: a run fails before any node runs`,
      `Declare it under "mcp_servers" in the workflow, or in the file given by --mcp-config / FLOWMEND_MCP_CONFIG (pflow's ~/.pflow/mcp-servers.json is read by default)`,
    ),
  );
  for (const [name, server] of Object.entries(workflow.mcp_servers ?? {})) {
    for (const where of plainTextSecrets(server)) {
      issues.push(
        error(
          formatIssuePath(['mcp_servers', name, ...where.split('.')]),
          'PLAIN_TEXT_SECRET',
          `MCP server '${name}': ${where} holds a literal secret, which would be stored in plain text with the run`,
          'Write a reference to the environment instead, e.g. "Bearer ${SLACK_TOKEN}"',
        ),
      );
    }
  }
  return issues;
}

/** pflow's outputs without `source`: they still run, taking the key from the last node that wrote it. */
function checkOutputSources(workflow: Workflow, catalog: NodeCatalog): ValidationIssue[] {
  return Object.entries(workflow.outputs).flatMap(([name, spec]) => {
    if (spec.source !== undefined) return [];
    const writer = [...workflow.nodes].reverse().find((n) => catalog.get(n.type)?.outputKeys.includes(name));
    const guess = writer === undefined ? '' : ` (here probably '\${${writer.id}.${name}}')`;
    return [
      warning(
        formatIssuePath(['outputs', name]),
        'OUTPUT_WITHOUT_SOURCE',
        `Output '${name}' has no "source": it is the key '${name}' of the last node that wrote one${guess}`,
        `Add "source": "${writer === undefined ? '${node.key}' : `\${${writer.id}.${name}}`}" to say which`,
      ),
    ];
  });
}

/**
 * Issues of workflows validated at the top level, by the workflow object and the node types it was checked
 * against: a run's workflow is validated before the run is created (prepareRun) and again by its first
 * Advance, which in the same process (the CLI, the local host) is the same object (the engine's cache holds
 * it), ~0.2 ms a node. A workflow is not changed once parsed (a repair or a patch makes a new version).
 */
const validatedTopLevel = new WeakMap<Workflow, { catalog: NodeCatalog; issues: readonly ValidationIssue[] }>();

/**
 * The same node types: the same specs, or runners made of them (a runner is its spec and a `run`, which
 * validation does not read). The CLI validates against the specs, its local host against its runners.
 */
const sameSpec = (a: NodeTypeSpec, b: NodeTypeSpec | undefined): boolean => {
  if (a === b) return true;
  if (b === undefined) return false;
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  fields.delete('run');
  return [...fields].every((field) => a[field as keyof NodeTypeSpec] === b[field as keyof NodeTypeSpec]);
};
const sameCatalog = (a: NodeCatalog, b: NodeCatalog): boolean => a === b || (a.size === b.size && [...a].every(([type, spec]) => sameSpec(spec, b.get(type))));

/**
 * Records what validating `workflow` against `catalog` found, when the workflow is a copy of one validated
 * elsewhere against the same node types (a run created by serve's main thread, driven by a worker thread of
 * the same process, receives a structured clone): its first Advance then does not validate it again.
 */
export const rememberValidation = (workflow: Workflow, catalog: NodeCatalog, issues: readonly ValidationIssue[]): void => {
  validatedTopLevel.set(workflow, { catalog, issues: issues.map((issue) => ({ ...issue })) });
};

/** Static checks of a parsed workflow against the node types a host knows; an empty list means it may run. */
export function validateWorkflow(workflow: Workflow, catalog: NodeCatalog, nesting: Nesting = TOP_LEVEL): ValidationIssue[] {
  if (nesting !== TOP_LEVEL) return checkWorkflow(workflow, catalog, nesting);
  const known = validatedTopLevel.get(workflow);
  if (known && sameCatalog(known.catalog, catalog)) return known.issues.map((issue) => ({ ...issue }));
  const issues = checkWorkflow(workflow, catalog, nesting);
  validatedTopLevel.set(workflow, { catalog, issues: issues.map((issue) => ({ ...issue })) });
  return issues;
}

function checkWorkflow(workflow: Workflow, catalog: NodeCatalog, nesting: Nesting): ValidationIssue[] {
  const graph = buildGraph(workflow);
  return [
    // `nesting`: where this workflow sits under workflow nodes (top level for the one being run).
    ...checkWorkflowNodes(workflow, catalog, nesting, validateWorkflow),
    ...checkWaits(workflow, nesting),
    ...checkFlowControl(workflow, nesting),
    ...checkNodes(workflow, catalog),
    ...checkGraph(workflow, graph),
    ...checkInputs(workflow),
    ...checkTemplates(workflow, catalog, graph),
    ...checkQuoting(workflow, catalog),
    ...checkSensitiveHeaders(workflow),
    ...checkMcpServers(workflow),
    ...checkOutputSources(workflow, catalog),
    ...checkPflowFeatures(workflow),
  ];
}

/** Whether any issue is an error (warnings alone let a workflow run). */
export const hasErrors = (issues: readonly ValidationIssue[]): boolean => issues.some((i) => i.severity === 'error');
