import { parseWorkflow, type Workflow } from '../../core/index.ts';

type Parsed = ReturnType<typeof parseWorkflow>;

/** Freezes an object and everything it holds: a parsed workflow handed to many runs, none of which may change it. */
const deepFreeze = (value: unknown): void => {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const inner of Object.values(value)) deepFreeze(inner);
};

export interface ParsedWorkflowsLimits {
  /** Workflows kept, the least recently started dropped first. */
  entries: number;
  /** A workflow whose JSON is longer is parsed for its run alone, not kept. */
  maxChars: number;
}

/** 32 workflows of up to 32 KiB of JSON each (a workflow is a few KiB): at most 1 MiB of text and what it parses to. */
export const DEFAULT_PARSED_WORKFLOWS_LIMITS: ParsedWorkflowsLimits = { entries: 32, maxChars: 32 * 1024 };

/**
 * The workflows runs were recently started from, parsed, by their JSON text: a batch of POST /runs of one
 * workflow parses it once, and as every run then gets the same object, core's validation (known by the
 * object and the catalog) runs once too (~0.7 ms of serve's CPU a run of a 10-node workflow). The text alone
 * decides a parse; the registered children a workflow names are read and inlined per request, after this.
 * Every kept workflow is frozen to its leaves, so that no run can change what the next one starts from.
 * A workflow that does not parse is not kept (its errors are reported as they always were).
 */
export class ParsedWorkflows {
  readonly stats = { hits: 0, misses: 0 };
  private readonly byText = new Map<string, Workflow>();

  constructor(private readonly limits: ParsedWorkflowsLimits = DEFAULT_PARSED_WORKFLOWS_LIMITS) {}

  parse(raw: unknown): Parsed {
    if (raw === null || typeof raw !== 'object') return parseWorkflow(raw);
    const text = JSON.stringify(raw);
    const known = this.byText.get(text);
    if (known) {
      this.stats.hits += 1;
      this.byText.delete(text);
      this.byText.set(text, known);
      return { ok: true, workflow: known };
    }
    this.stats.misses += 1;
    const parsed = parseWorkflow(raw);
    if (!parsed.ok || text.length > this.limits.maxChars) return parsed;
    deepFreeze(parsed.workflow);
    if (this.byText.size >= this.limits.entries) this.byText.delete(this.byText.keys().next().value as string);
    this.byText.set(text, parsed.workflow);
    return parsed;
  }
}
