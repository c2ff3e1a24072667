import { BatchConfigSchema } from './batch/batch-config.ts';
import { ConcurrencySchema, DebounceSchema, RateLimitSchema, SingletonSchema } from './flow/flow-config.ts';
import { builtOnFirstUse } from './lazy-schema.ts';
import { McpServersSchema } from './mcp-servers.ts';
import { LoopConfigSchema, PromptCacheSchema, RetryConfigSchema } from './node-config.ts';
import { SECRET_SOURCE_HINT, SECRET_SOURCE_PATTERN } from './secret-source.ts';
import * as z from './zod.ts';

/** Declared input types: pflow's current ones (`integer`, `any`) and its older spelling variants, so pflow workflows parse unchanged. */
export const InputTypeSchema = builtOnFirstUse(() =>
  z.enum(['string', 'number', 'integer', 'boolean', 'object', 'array', 'any', 'str', 'int', 'float', 'bool', 'dict', 'list']),
);
export type InputType = z.infer<typeof InputTypeSchema>;

export const InputSpecSchema = builtOnFirstUse(() =>
  z
    .strictObject({
      description: z.optional(z.string()),
      /** pflow default: required unless a default is given. */
      required: z.optional(z.boolean()),
      type: z.optional(InputTypeSchema),
      default: z.optional(z.unknown()),
      stdin: z.optional(z.boolean()),
      /** The value is never stored, logged or shown: a resume reads it again from FLOWMEND_SECRET_<NAME>. */
      secret: z.optional(z.boolean()),
      /** A secret read at use by the node's runner, from Secrets Manager or SSM Parameter Store (see secret-source.ts). */
      from: z.optional(z.string().check(z.regex(SECRET_SOURCE_PATTERN, `"from" names where a secret input is read: ${SECRET_SOURCE_HINT}`))),
    })
    .check(
      z.refine((spec) => spec.from === undefined || spec.secret === true, { message: 'an input with "from" is a secret: add "secret": true', path: ['from'] }),
    ),
);
export type InputSpec = z.infer<typeof InputSpecSchema>;

export const OutputSpecSchema = builtOnFirstUse(() =>
  z.strictObject({
    description: z.optional(z.string()),
    type: z.optional(InputTypeSchema),
    /** Without it (pflow's legacy form) the output is the key of that name from the last node that wrote it. */
    source: z.optional(z.string({ error: 'an output\'s "source" is a template, e.g. "${node.stdout}"' })),
    /** pflow's: this output is what `run` prints on stdout (at most one output says so). */
    stdout: z.optional(z.boolean()),
  }),
);
export type OutputSpec = z.infer<typeof OutputSpecSchema>;

export const NODE_ID_PATTERN = /^[a-zA-Z_][\w-]*$/;
/** Ids pflow reserves: `next: end` ends a run, so no node may be called that. */
export const RESERVED_NODE_IDS: ReadonlySet<string> = new Set(['end', '__end__']);

/**
 * Names of `Object.prototype` members (`__proto__`, `constructor`, `toString`...). Node ids, input and
 * output names key plain objects all the way to the store and the report, where such a name would read
 * an inherited member or replace the prototype; they are refused with a clear message instead.
 */
const RESERVED_NAMES: ReadonlySet<string> = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);
export const isReservedName = (name: string): boolean => RESERVED_NAMES.has(name);
export const reservedNameMessage = (what: string, name: string): string =>
  `${what} '${name}' is reserved (a built-in property name of JavaScript objects); choose another name`;

export const NodeIdSchema = builtOnFirstUse(() =>
  z.string().check(
    z.regex(NODE_ID_PATTERN, 'a node id starts with a letter or _ and holds letters, digits, _ or - (so templates can name it)'),
    z.refine((id) => !isReservedName(id), { error: (issue) => reservedNameMessage('node id', String(issue.input)) }),
    z.refine((id) => !RESERVED_NODE_IDS.has(id), {
      error: (issue) => `node id '${String(issue.input)}' is reserved: "next: end" ends a run; choose another id`,
    }),
  ),
);
export type NodeId = z.infer<typeof NodeIdSchema>;

export const NodeSchema = builtOnFirstUse(() =>
  z.strictObject({
    id: NodeIdSchema,
    type: z.string().check(z.minLength(1, 'a node needs a type, e.g. "shell"')),
    purpose: z.optional(z.string()),
    params: z._default(z.record(z.string(), z.unknown()), {}),
    /** Overrides the node type's own declaration of side effects. */
    side_effects: z.optional(z.boolean()),
    /** Run the node once per item (pflow's batch); see batch/batch-config.ts. */
    batch: z.optional(BatchConfigSchema),
    /** pflow's gate: before the node runs, the run waits for a person to approve its resolved params (DESIGN 7b). */
    approval: z.optional(z.enum(['required'], { error: 'The only supported value is "approval": "required"' })),
    /** Run the node again while (or until) one of its outputs says so (pflow's loop); see node-config.ts. */
    loop: z.optional(LoopConfigSchema),
    /** Tries in all, and the wait between them, when the node fails (pflow's retry); see node-config.ts. */
    retry: z.optional(RetryConfigSchema),
    /** Reuse a result of an earlier run with the same type and resolved params (pflow's memo cache); default: llm nodes only. */
    cache: z.optional(z.boolean()),
    /** pflow's prompt caching: names of `## Cache` chunks (the workflow's `cache.items`) put before an llm node's prompt, in their order. */
    prompt_cache: z.optional(z.array(z.string())),
    /** pflow's batch prewarm of an llm node's prompt cache (accepted; items start as the batch says). */
    prewarm: z.optional(z.boolean()),
    /** At most `limit` visits of nodes naming this key at once, across runs (docs/flow-control.md). */
    concurrency: z.optional(ConcurrencySchema),
    /** At most `limit` starts of nodes naming this key in any `period_s` seconds, across runs. */
    rate_limit: z.optional(RateLimitSchema),
  }),
);
export type WorkflowNode = z.infer<typeof NodeSchema>;

export const EdgeSchema = builtOnFirstUse(() =>
  z.pipe(
    z.transform((raw: unknown) => {
      // pflow's compiler also accepts source/target.
      if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
        const { source, target, ...rest } = raw as Record<string, unknown>;
        return { ...(source !== undefined ? { from: source } : {}), ...(target !== undefined ? { to: target } : {}), ...rest };
      }
      return raw;
    }),
    z.strictObject({
      from: z.string({ error: 'an edge needs "from", a node id' }),
      to: z.string({ error: 'an edge needs "to", a node id' }),
      action: z._default(z.string().check(z.minLength(1)), 'default'),
    }),
  ),
);
export type Edge = z.infer<typeof EdgeSchema>;

/**
 * Per-workflow overrides of outcome classification (DESIGN section 5). Patterns are matched
 * case-insensitively as substrings of the business error message of an API response.
 */
export const ClassificationRulesSchema = builtOnFirstUse(() =>
  z.strictObject({
    warning_patterns: z.optional(z.array(z.string().check(z.minLength(1)))),
    repairable_patterns: z.optional(z.array(z.string().check(z.minLength(1)))),
    warning_status_codes: z.optional(z.array(z.int().check(z.gte(100), z.lte(599)))),
    repairable_status_codes: z.optional(z.array(z.int().check(z.gte(100), z.lte(599)))),
    transient_status_codes: z.optional(z.array(z.int().check(z.gte(100), z.lte(599)))),
  }),
);
export type ClassificationRules = z.infer<typeof ClassificationRulesSchema>;

/**
 * Whether a person approves a repair before it is applied: `none` (never), `llm` (an LLM's patch; a rule's
 * fix of a typo goes through) or `all` (every repair).
 */
export const RepairApprovalSchema = builtOnFirstUse(() => z.enum(['none', 'llm', 'all'], { error: 'repair.approval is "none", "llm" or "all"' }));
export type RepairApproval = z.infer<typeof RepairApprovalSchema>;

/** When a run and its workflow say nothing: repairs apply unattended, as they always have (see docs/waits-and-approvals.md). */
export const DEFAULT_REPAIR_APPROVAL: RepairApproval = 'none';

/** The workflow's repair policy; a run may override it (`--repair-approval`, `repair_approval`). */
export const RepairPolicySchema = builtOnFirstUse(() => z.strictObject({ approval: z.optional(RepairApprovalSchema) }));

export const WorkflowSchema = builtOnFirstUse(() =>
  z.strictObject({
    ir_version: z._default(z.string().check(z.regex(/^\d+\.\d+\.\d+$/, 'ir_version is a version like "0.1.0"')), '0.1.0'),
    name: z.optional(z.string()),
    description: z.optional(z.string()),
    inputs: z._default(z.record(z.string(), InputSpecSchema), {}),
    nodes: z.array(NodeSchema).check(z.minLength(1, 'a workflow needs at least one node')),
    edges: z._default(z.array(EdgeSchema), []),
    start_node: z.optional(z.string()),
    outputs: z._default(z.record(z.string(), OutputSpecSchema), {}),
    classification: z.optional(ClassificationRulesSchema),
    /** MCP servers the workflow's mcp nodes call, by name (pflow's mcp-servers.json entries). */
    mcp_servers: z.optional(McpServersSchema),
    /** pflow's `## Cache`: prompt-cache chunks for llm nodes' `prompt_cache` (not the memo cache). */
    cache: z.optional(PromptCacheSchema),
    /** Whether repairs wait for a person (`{"approval": "llm"}`). */
    repair: z.optional(RepairPolicySchema),
    /** Flow control across runs (docs/flow-control.md): at most `limit` runs of the key at once; starts debounced; one run at a time. */
    concurrency: z.optional(ConcurrencySchema),
    debounce: z.optional(DebounceSchema),
    singleton: z.optional(SingletonSchema),
    // pflow keys accepted for compatibility; flowmend always namespaces and resolves strictly.
    mappings: z.optional(z.unknown()),
    enable_namespacing: z.optional(z.boolean()),
    template_resolution_mode: z.optional(z.enum(['strict', 'permissive'])),
  }),
);
export type Workflow = z.infer<typeof WorkflowSchema>;
/** The IR as written by a person (before defaults). */
export type WorkflowInput = z.input<typeof WorkflowSchema>;

/** Whether an input must be given: pflow's rule, required unless it says otherwise or has a default. */
export const isInputRequired = (spec: InputSpec): boolean => spec.required ?? spec.default === undefined;

/** The node where a run starts. */
export const startNodeId = (wf: Workflow): string => wf.start_node ?? (wf.nodes[0] as WorkflowNode).id;

/**
 * A workflow's nodes by id and its edges by `from` and action, made at the first lookup: the engine looks a node
 * and its next one up at every step and every replayed node, and a scan of the arrays each time made a walk over
 * n nodes cost n² (a chain of 1,000: half a million comparisons a resume). Kept for the arrays it was made from
 * (and their lengths): a workflow given other arrays, or a longer one, is indexed again. The first node or edge
 * that matches wins, as a scan's would.
 */
interface IrIndex {
  nodes: readonly WorkflowNode[];
  nodeCount: number;
  edges: readonly Edge[];
  edgeCount: number;
  byId: Map<string, WorkflowNode>;
  next: Map<string, string>;
}
const indexes = new WeakMap<Workflow, IrIndex>();
const edgeKey = (from: string, action: string): string => `${from}\u0000${action}`;

const indexOf = (wf: Workflow): IrIndex => {
  const known = indexes.get(wf);
  if (known && known.nodes === wf.nodes && known.nodeCount === wf.nodes.length && known.edges === wf.edges && known.edgeCount === wf.edges.length) return known;
  const byId = new Map<string, WorkflowNode>();
  for (const node of wf.nodes) if (!byId.has(node.id)) byId.set(node.id, node);
  const next = new Map<string, string>();
  for (const edge of wf.edges) {
    const key = edgeKey(edge.from, edge.action);
    if (!next.has(key)) next.set(key, edge.to);
  }
  const index = { nodes: wf.nodes, nodeCount: wf.nodes.length, edges: wf.edges, edgeCount: wf.edges.length, byId, next };
  indexes.set(wf, index);
  return index;
};

/** The node with this id, if any. */
export const nodeById = (wf: Workflow, id: string): WorkflowNode | undefined => indexOf(wf).byId.get(id);

/** The node that an action leads to from `from`, if any. */
export const nextNodeId = (wf: Workflow, from: string, action: string): string | undefined => indexOf(wf).next.get(edgeKey(from, action));
