import { availablePaths } from '../templates.ts';
import { describeOutputShape } from './output-shape.ts';
import { runtimeContext } from './rules.ts';
import type { RepairContext } from './types.ts';

const DETAILS_CHARS = 1500;
const AVAILABLE_PATHS = 60;

export const REPAIR_SYSTEM_PROMPT = [
  'You repair flowmend workflows: JSON graphs of nodes (shell, http, llm, transform, mcp, file nodes) joined by action-labelled edges.',
  'A node failed, or the workflow failed static validation. Return the whole workflow with the smallest change that fixes it.',
  'Rules:',
  '- Keep every node, edge, input, output, top-level field and param you have no reason to change, with the same values. Never drop a param to "simplify".',
  '- Only nodes, edges and outputs may change; "inputs", "description" and other top-level fields must stay as they are.',
  '- Completed nodes are frozen: their results are recorded and replayed. Do not change the params of a completed node marked "side effects: yes", nor of any completed node whose templates read (directly or through other nodes) from a node you change: it would run twice.',
  '- The fix may belong in an upstream node that has not completed, or in an edge.',
  '- Templates: ${input_name}, ${node_id.output_key.path[0]}. Use only the available template paths listed, or output keys of nodes that run before. $${x} is a literal ${x}.',
  '- Reply with one JSON object and nothing else: {"workflow": <the whole repaired workflow>, "reason": "<one sentence: what you changed and why>"}, bare or inside a ```json fence.',
].join('\n');

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max)}…` : text);

function failureSection(ctx: RepairContext): string[] {
  const { failure } = ctx;
  if (failure.kind === 'static') {
    return [
      '## What failed',
      'The workflow failed static validation before any node ran. Issues:',
      ...failure.issues.map((i, n) => `${n + 1}. [${i.code}] at ${i.path || '(workflow)'}: ${i.message}${i.hint ? `\n   hint: ${i.hint}` : ''}`),
    ];
  }
  const { error } = failure;
  const node = ctx.workflow.nodes.find((n) => n.id === (ctx.failedNode || error.node_id));
  const lines = ['## What failed'];
  lines.push(
    node === undefined
      ? 'Failed while producing the workflow outputs.'
      : `Failed node: '${node.id}' (type ${node.type}), params:\n${JSON.stringify(node.params, null, 2)}`,
  );
  lines.push(`Error [${error.category}] ${error.code}: ${error.message}`);
  const { input_schema: inputSchema, ...details } = error.details ?? {};
  if (Object.keys(details).length > 0) lines.push(`Error details: ${clip(JSON.stringify(details), DETAILS_CHARS)}`);
  // An MCP tool's own JSON Schema for its arguments: the authority on what "arguments" must hold.
  if (inputSchema !== undefined)
    lines.push(`Input schema of the tool (the node's "arguments" must match it):\n${clip(JSON.stringify(inputSchema, null, 2), DETAILS_CHARS)}`);
  return lines;
}

function completedSection(ctx: RepairContext): string[] {
  if (ctx.completed.length === 0) return ['## Completed nodes', 'None: no node has completed yet.'];
  const lines = ['## Completed nodes (frozen)', 'These already ran; their results are recorded and will be replayed. Shapes of their outputs:'];
  for (const node of ctx.completed) {
    lines.push(`- ${node.nodeId} (${node.nodeType}, side effects: ${node.sideEffects ? 'yes' : 'no'}${node.action ? `, action: ${node.action}` : ''})`);
    lines.push(...describeOutputShape(node.outputs, '    '));
  }
  return lines;
}

function nodeTypesSection(ctx: RepairContext): string[] {
  const lines = ['## Node types'];
  for (const [type, spec] of ctx.catalog) {
    lines.push(
      `- ${type}: params ${Object.keys(spec.paramsSchema.shape)
        .filter((k) => !k.startsWith('__'))
        .join(', ')}; outputs ${spec.outputKeys.join(', ')}`,
    );
  }
  return lines;
}

/** The user prompt: the IR, what failed, frozen nodes with their output shapes, available paths, node types, and earlier refusals. */
export function buildRepairPrompt(ctx: RepairContext, refusals: readonly string[] = []): string {
  const near = ctx.failure.kind === 'runtime' ? ctx.failure.error.details?.unresolved : undefined;
  const nearText = Array.isArray(near) && typeof near[0] === 'string' ? near[0].replace(/^\$\{|\}$/g, '') : undefined;
  const paths = availablePaths(runtimeContext(ctx), { limit: AVAILABLE_PATHS, ...(nearText ? { near: nearText } : {}) });
  const sections: string[][] = [
    ['## Workflow', ...(ctx.workflow.description ? [`Purpose: ${ctx.workflow.description}`] : []), '```json', JSON.stringify(ctx.workflow, null, 2), '```'],
    failureSection(ctx),
    completedSection(ctx),
    ['## Available template paths', paths.length === 0 ? '(none yet)' : paths.map((p) => `\${${p}}`).join(', ')],
    nodeTypesSection(ctx),
  ];
  if (refusals.length > 0) {
    sections.push(['## Your previous reply was refused', ...refusals.map((r) => `- ${r}`), 'Fix these problems in your next reply.']);
  }
  sections.push(['## Reply', 'Only the JSON object {"workflow": {...}, "reason": "..."}.']);
  return sections.map((s) => s.join('\n')).join('\n\n');
}
