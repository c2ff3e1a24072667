import type { InputSpec, InputType, Workflow } from './ir.ts';
import { isInputRequired } from './ir.ts';
import { secretReference } from './secret-source.ts';

export interface InputProblem {
  input: string;
  message: string;
}

const TYPE_NAMES: Record<InputType, 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'any'> = {
  string: 'string',
  str: 'string',
  number: 'number',
  float: 'number',
  int: 'integer',
  integer: 'integer',
  boolean: 'boolean',
  bool: 'boolean',
  object: 'object',
  dict: 'object',
  array: 'array',
  list: 'array',
  any: 'any',
};

const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

/** Coerces one value (often a `name=value` string from the CLI) to the declared type, or says why not. */
const coerce = (value: unknown, type: InputType | undefined): { ok: true; value: unknown } | { ok: false; why: string } => {
  if (type === undefined) return { ok: true, value };
  const want = TYPE_NAMES[type];
  const text = typeof value === 'string' ? value.trim() : undefined;
  switch (want) {
    case 'any':
      return { ok: true, value };
    case 'string':
      return { ok: true, value: typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value) };
    case 'number':
    case 'integer': {
      const n = typeof value === 'number' ? value : text !== undefined && text !== '' ? Number(text) : Number.NaN;
      if (!Number.isFinite(n)) return { ok: false, why: `expected a ${want}, got ${JSON.stringify(value)}` };
      if (want === 'integer' && !Number.isInteger(n)) return { ok: false, why: `expected an integer, got ${JSON.stringify(value)}` };
      return { ok: true, value: n };
    }
    case 'boolean': {
      if (typeof value === 'boolean') return { ok: true, value };
      const t = text?.toLowerCase();
      if (t === 'true' || t === '1' || t === 'yes') return { ok: true, value: true };
      if (t === 'false' || t === '0' || t === 'no') return { ok: true, value: false };
      return { ok: false, why: `expected a boolean (true/false), got ${JSON.stringify(value)}` };
    }
    case 'object':
    case 'array': {
      const parsed = text !== undefined ? parseJson(text) : { ok: true as const, value };
      const v = parsed.ok ? parsed.value : undefined;
      const isArray = Array.isArray(v);
      const fits = want === 'array' ? isArray : v !== null && typeof v === 'object' && !isArray;
      if (!fits)
        return { ok: false, why: `expected ${want === 'array' ? 'a JSON array, e.g. [1,2]' : 'a JSON object, e.g. {"a":1}'}, got ${JSON.stringify(value)}` };
      return { ok: true, value: v };
    }
  }
};

/**
 * The params a run starts with: given values coerced to the declared input types, defaults filled in,
 * missing required inputs reported. Values for undeclared names are kept as given.
 */
export const prepareInputs = (
  workflow: Workflow,
  given: Readonly<Record<string, unknown>>,
): { ok: true; params: Record<string, unknown> } | { ok: false; problems: InputProblem[] } => {
  const params: Record<string, unknown> = { ...given };
  const problems: InputProblem[] = [];
  for (const [name, spec] of Object.entries(workflow.inputs) as [string, InputSpec][]) {
    if (spec.from !== undefined) {
      // Read by the runner at use: the run keeps where from, never the value.
      const reference = secretReference(spec.from);
      if (name in given && given[name] !== reference)
        problems.push({ input: name, message: `input '${name}' is read from ${spec.from} when a node uses it: do not pass a value` });
      params[name] = reference;
      continue;
    }
    if (!(name in given)) {
      if (spec.default !== undefined) params[name] = structuredClone(spec.default);
      else if (isInputRequired(spec)) {
        const about = spec.description ? ` (${spec.description})` : '';
        problems.push({ input: name, message: `missing required input '${name}'${about}: pass ${name}=<${spec.type ?? 'value'}>` });
      }
      continue;
    }
    const result = coerce(given[name], spec.type);
    if (result.ok) params[name] = result.value;
    else problems.push({ input: name, message: `input '${name}': ${result.why}` });
  }
  return problems.length === 0 ? { ok: true, params } : { ok: false, problems };
};
