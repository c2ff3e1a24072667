import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import type { Workflow } from '../../core/index.ts';
import { DEFAULT_LIMITS, LIMIT_VARIABLES, type Limits } from '../../core/index.ts';
import { parseWorkflow } from '../../core/index.ts';
import type { ValidationIssue } from '../../core/index.ts';
import type { PflowFormOptions } from '../../core/index.ts';

export type LoadedWorkflow =
  | { ok: true; workflow: Workflow; name: string }
  | { ok: false; issues: ValidationIssue[] };

/** Reads and parses a workflow file (pflow's forms too; servers of an MCP config copied in); every problem is an issue naming the file or field. */
export const loadWorkflowFile = async (path: string, options: PflowFormOptions = {}, limits: Limits = DEFAULT_LIMITS): Promise<LoadedWorkflow> => {
  let text: string;
  try {
    const size = (await stat(path)).size;
    if (size > limits.maxIrBytes) {
      return { ok: false, issues: [{ path, code: 'IR_TOO_LARGE', message: `workflow file '${path}' is ${size} bytes; the limit is ${limits.maxIrBytes}`, hint: `The limit is set by ${LIMIT_VARIABLES.maxIrBytes}`, severity: 'error' }] };
    }
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    return { ok: false, issues: [{ path: path, code: 'FILE_UNREADABLE', message: `cannot read workflow file '${path}': ${why}`, severity: 'error' }] };
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return { ok: false, issues: [{ path, code: 'INVALID_JSON', message: `'${path}' is not valid JSON: ${(error as Error).message}`, hint: 'flowmend reads pflow-compatible JSON workflows', severity: 'error' }] };
  }
  const parsed = parseWorkflow(raw, options, limits);
  if (!parsed.ok) return parsed;
  return { ok: true, workflow: parsed.workflow, name: parsed.workflow.name ?? basename(path, extname(path)) };
};
