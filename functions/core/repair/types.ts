import type { Workflow } from '../ir.ts';
import type { LlmUsage, NodeCatalog } from '../node-type.ts';
import type { RunError } from '../run-model.ts';
import type { ValidationIssue } from '../validate.ts';

export interface RepairLlmRequest {
  system: string;
  prompt: string;
  model: string;
  maxTokens: number;
}

export interface RepairLlmReply {
  text: string;
  usage: { input_tokens: number; output_tokens: number };
}

/** Completes one repair prompt with a model; rejects with a FlowmendError when the call fails. */
export interface RepairLlm {
  complete(request: RepairLlmRequest): Promise<RepairLlmReply>;
}

/** What went wrong: one node's error at run time, or the static validation issues of a workflow not yet run. */
export type RepairFailure = { kind: 'runtime'; error: RunError } | { kind: 'static'; issues: ValidationIssue[] };

/** A node whose result is recorded on the current path: its outputs are real and it will be replayed, not re-run. */
export interface CompletedNode {
  nodeId: string;
  nodeType: string;
  sideEffects: boolean;
  outputs: Record<string, unknown>;
  action?: string;
}

/** Everything a repair is planned from. */
export interface RepairContext {
  workflow: Workflow;
  failure: RepairFailure;
  /** The node that failed ('' or undefined before any node ran). */
  failedNode?: string;
  completed: CompletedNode[];
  /** The run's inputs (params after defaults). */
  inputs: Record<string, unknown>;
  catalog: NodeCatalog;
}

/** A repaired workflow and what was changed, ready to be stored as a new IR version. */
export interface RepairChange {
  ir: Workflow;
  reason: string;
  diff: string[];
  nodesChanged: string[];
}

export type RepairPlan =
  | (RepairChange & { ok: true; source: 'rules' | 'llm'; llmCalls: number; usage?: LlmUsage })
  | { ok: false; message: string; llmCalls: number; usage?: LlmUsage /** A refused proposal: what was wrong with it. */; problems?: string[] };

/** USD cost of a model call, from the one price table. */
export type CostOf = (model: string, usage: { input_tokens: number; output_tokens: number }) => number;
