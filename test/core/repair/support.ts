import type { Workflow, WorkflowInput } from '../../../functions/core/ir.ts';
import { WorkflowSchema } from '../../../functions/core/ir.ts';
import type { CompletedNode, RepairContext, RepairFailure } from '../../../functions/core/repair/index.ts';
import type { RunError } from '../../../functions/core/run-model.ts';
import { builtinCatalog } from '../../../functions/nodes/catalog.ts';

export const wf = (input: WorkflowInput): Workflow => WorkflowSchema.parse(input);

export const done = (nodeId: string, outputs: Record<string, unknown>, nodeType = 'shell', sideEffects = nodeType === 'shell'): CompletedNode => ({
  nodeId,
  nodeType,
  sideEffects,
  outputs,
  action: 'default',
});

export const templateError = (nodeId: string, unresolved: string[]): RunError => ({
  node_id: nodeId,
  category: 'template',
  code: 'TEMPLATE_UNRESOLVED',
  message: `Unresolved template: ${unresolved.join(', ')}`,
  fixable: true,
  details: { unresolved },
});

export const runtime = (error: RunError): RepairFailure => ({ kind: 'runtime', error });

export const context = (workflow: Workflow, failure: RepairFailure, completed: CompletedNode[] = [], inputs: Record<string, unknown> = {}): RepairContext => ({
  workflow,
  failure,
  completed,
  inputs,
  catalog: builtinCatalog,
  ...(failure.kind === 'runtime' && failure.error.node_id ? { failedNode: failure.error.node_id } : {}),
});
