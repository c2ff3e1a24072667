import { BatchConfigSchema } from './batch/batch-config.ts';
import { closestMatch } from './closest-match.ts';
import {
  ClassificationRulesSchema,
  InputSpecSchema,
  isReservedName,
  NodeSchema,
  OutputSpecSchema,
  reservedNameMessage,
  type Workflow,
  WorkflowSchema,
} from './ir.ts';
import { checkIrShape } from './ir-shape.ts';
import { DEFAULT_LIMITS, type Limits } from './limits.ts';
import { normalisePflowForms, type PflowFormOptions } from './pflow-forms.ts';
import { formatIssuePath, type ValidationIssue } from './validation-issue.ts';
import type * as z from './zod.ts';

interface KnownKeys {
  /** Read when an issue needs them: the schemas are built on first use (lazy-schema.ts). */
  keys: () => readonly string[];
  /** Words people use for a key that is spelled differently here. */
  aliases: Readonly<Record<string, string>>;
}

const WORKFLOW_KEYS: KnownKeys = {
  keys: () => Object.keys(WorkflowSchema.unwrap().shape),
  aliases: {
    version: 'ir_version',
    steps: 'nodes',
    tasks: 'nodes',
    links: 'edges',
    connections: 'edges',
    start: 'start_node',
    params: 'inputs',
    parameters: 'inputs',
  },
};
const NODE_KEYS: KnownKeys = {
  keys: () => Object.keys(NodeSchema.unwrap().shape),
  aliases: {
    parameters: 'params',
    args: 'params',
    arguments: 'params',
    config: 'params',
    inputs: 'params',
    with: 'params',
    kind: 'type',
    name: 'id',
    description: 'purpose',
  },
};
const EDGE_KEYS: KnownKeys = {
  keys: () => ['from', 'to', 'action'],
  aliases: { on: 'action', label: 'action', condition: 'action', when: 'action' },
};
const INPUT_KEYS: KnownKeys = { keys: () => Object.keys(InputSpecSchema.unwrap().shape), aliases: { optional: 'required', kind: 'type' } };
const OUTPUT_KEYS: KnownKeys = {
  keys: () => Object.keys(OutputSpecSchema.unwrap().shape),
  aliases: { value: 'source', from: 'source', template: 'source', expr: 'source' },
};
const BATCH_KEYS: KnownKeys = {
  keys: () => Object.keys(BatchConfigSchema.unwrap().shape),
  aliases: { concurrency: 'max_concurrent', on_error: 'error_handling' },
};
const CLASSIFICATION_KEYS: KnownKeys = { keys: () => Object.keys(ClassificationRulesSchema.unwrap().shape), aliases: {} };

/** Which object an issue path points into, so that an unknown key can be compared with the valid ones. */
function knownKeysAt(path: readonly PropertyKey[]): KnownKeys | undefined {
  const [first] = path;
  if (path.length === 0) return WORKFLOW_KEYS;
  if (path.length === 1 && first === 'classification') return CLASSIFICATION_KEYS;
  if (path.length === 3 && first === 'nodes' && path[2] === 'batch') return BATCH_KEYS;
  if (path.length !== 2) return undefined;
  if (first === 'nodes') return NODE_KEYS;
  if (first === 'edges') return EDGE_KEYS;
  if (first === 'inputs') return INPUT_KEYS;
  if (first === 'outputs') return OUTPUT_KEYS;
  return undefined;
}

/** pflow node keys flowmend does not run yet, with what to do instead. */
const UNSUPPORTED_NODE_KEYS: Readonly<Record<string, string>> = {};

function unknownKeyIssues(issue: z.core.$ZodIssueUnrecognizedKeys): ValidationIssue[] {
  const known = knownKeysAt(issue.path);
  return issue.keys.map((key) => {
    const path = formatIssuePath([...issue.path, key]);
    const unsupported = known === NODE_KEYS ? UNSUPPORTED_NODE_KEYS[key] : undefined;
    if (unsupported !== undefined) {
      return { path, code: 'UNSUPPORTED_KEY', message: `'${key}' in ${formatIssuePath(issue.path)} is not supported`, hint: unsupported, severity: 'error' };
    }
    const where = issue.path.length > 0 ? ` in ${formatIssuePath(issue.path)}` : ' at the top level of the workflow';
    const suggestion = known === undefined ? undefined : (known.aliases[key] ?? closestMatch(key, known.keys()));
    const valid = known === undefined ? '' : `Valid keys: ${known.keys().join(', ')}`;
    const hint = suggestion === undefined ? valid : `Did you mean '${suggestion}'? ${valid}`;
    return { path, code: 'UNKNOWN_KEY', message: `Unknown key '${key}'${where}`, severity: 'error', ...(hint ? { hint: hint.trim() } : {}) };
  });
}

const describeReceived = (input: unknown): string =>
  input === null ? 'null' : Array.isArray(input) ? 'an array' : typeof input === 'object' ? 'an object' : `${typeof input} ${JSON.stringify(input)}`;

function toValidationIssues(issue: z.core.$ZodIssue): ValidationIssue[] {
  if (issue.code === 'unrecognized_keys') return unknownKeyIssues(issue);
  const path = formatIssuePath(issue.path);
  const field = issue.path.length === 0 ? 'the workflow' : `'${path}'`;
  const base = { path, severity: 'error' as const };
  // Our schemas give their own messages; zod's defaults start with "Invalid".
  const ownMessage = !issue.message.startsWith('Invalid');
  switch (issue.code) {
    case 'invalid_type': {
      if (issue.input === undefined) {
        return [{ ...base, code: 'MISSING_FIELD', message: ownMessage ? issue.message : `${field} is missing`, hint: `Add ${field} (${issue.expected})` }];
      }
      const message = ownMessage
        ? issue.message
        : `${field} must be ${issue.expected === 'object' ? 'an object' : `a ${issue.expected}`}, not ${describeReceived(issue.input)}`;
      return [{ ...base, code: 'INVALID_TYPE', message }];
    }
    case 'invalid_value': {
      const values = issue.values.map(String);
      const close = typeof issue.input === 'string' ? closestMatch(issue.input, values) : undefined;
      const hint = `${close === undefined ? '' : `Did you mean '${close}'? `}Valid values: ${values.join(', ')}`;
      return [{ ...base, code: 'INVALID_VALUE', message: `${field} cannot be ${JSON.stringify(issue.input)}`, hint }];
    }
    default:
      return [
        {
          ...base,
          code: `INVALID_${issue.code.toUpperCase()}`,
          message: ownMessage ? `${field}: ${issue.message}` : `${field}: ${issue.message.replace(/^Invalid input: /, '')}`,
        },
      ];
  }
}

/**
 * Input and output names that are `Object.prototype` members. Checked on the raw JSON: zod drops a
 * `__proto__` key silently, so the parsed workflow could no longer tell.
 */
function reservedNameIssues(raw: unknown): ValidationIssue[] {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const issues: ValidationIssue[] = [];
  for (const [section, what] of [
    ['inputs', 'input name'],
    ['outputs', 'output name'],
  ] as const) {
    const names: unknown = Object.hasOwn(raw, section) ? (raw as Record<string, unknown>)[section] : undefined;
    if (names === null || typeof names !== 'object' || Array.isArray(names)) continue;
    for (const name of Object.keys(names)) {
      if (isReservedName(name))
        issues.push({ path: formatIssuePath([section, name]), code: 'RESERVED_NAME', message: reservedNameMessage(what, name), severity: 'error' });
    }
  }
  return issues;
}

/**
 * Workflows this function returned, with the limits they were parsed under. A caller that parses what a
 * parse returned (the API parses a request's workflow to inline its children, then `prepareRun` parses it
 * again; the CLI parses the file, then `prepareRun`) gets it back as it is, ~0.3 ms a node here: parsing a
 * parsed workflow again without pflow options returns the same workflow, and nothing changes a parsed one.
 */
const parsedUnder = new WeakMap<object, Limits>();

const sameLimits = (a: Limits, b: Limits): boolean => a === b || (Object.keys(a) as (keyof Limits)[]).every((key) => a[key] === b[key]);

/**
 * Parses raw JSON as a workflow (pflow's forms accepted, see pflow-forms.ts); on failure every problem is
 * an issue naming the field and what would be valid. Size and depth are checked first, on the raw JSON.
 */
export function parseWorkflow(
  raw: unknown,
  options: PflowFormOptions = {},
  limits: Limits = DEFAULT_LIMITS,
): { ok: true; workflow: Workflow } | { ok: false; issues: ValidationIssue[] } {
  const known = typeof raw === 'object' && raw !== null ? parsedUnder.get(raw) : undefined;
  if (known && sameLimits(known, limits) && Object.keys(options).length === 0) return { ok: true, workflow: raw as Workflow };
  const shape = checkIrShape(raw, limits);
  if (shape.length > 0) return { ok: false, issues: shape };
  const normalised = normalisePflowForms(raw, options);
  const reserved = reservedNameIssues(normalised);
  const result = WorkflowSchema.safeParse(normalised, { reportInput: true });
  if (result.success && reserved.length === 0) {
    parsedUnder.set(result.data, limits);
    return { ok: true, workflow: result.data };
  }
  return { ok: false, issues: [...reserved, ...(result.success ? [] : result.error.issues.flatMap(toValidationIssues))] };
}
