import { readFileSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import type { PflowFormOptions, ValidationIssue, Workflow } from '../../core/index.ts';
import { type ChildLoader, DEFAULT_LIMITS, inlineChildWorkflows, LIMIT_VARIABLES, type Limits, parseWorkflow } from '../../core/index.ts';

/** Places issues about the IR at the lines of the file it came from (a `.pflow.md`); as they are for JSON. */
export type LocateIssues = (issues: ValidationIssue[]) => ValidationIssue[];

export type LoadedWorkflow =
  | { ok: true; workflow: Workflow; name: string; locate: LocateIssues; warnings: ValidationIssue[] }
  | { ok: false; issues: ValidationIssue[] };

const asIs: LocateIssues = (issues) => issues;

/** pflow's markdown workflow files. */
export const isMarkdownWorkflow = (path: string): boolean => path.endsWith('.md');

const workflowName = (path: string): string => basename(path).replace(/\.pflow\.md$|\.[^.]*$/, '');

/**
 * Reads and parses a workflow file, JSON or pflow's `.pflow.md` (pflow's forms too; servers of an MCP config
 * copied in); every problem is an issue naming the file or field (and, for markdown, its line and column).
 */
export const loadWorkflowFile = async (path: string, options: PflowFormOptions = {}, limits: Limits = DEFAULT_LIMITS): Promise<LoadedWorkflow> => {
  const read = await readWorkflow(path, limits);
  if (!read.ok) return read;
  const parsed = parseWorkflow(read.raw, options, limits);
  if (!parsed.ok) return { ok: false, issues: read.locate(parsed.issues) };
  // Children named by workflow_ref are read now, relative to this file, and frozen into the run's first version.
  const inlined = await inlineChildWorkflows(parsed.workflow, resolve(path), childFileLoader(options, limits));
  if (!inlined.ok) return { ok: false, issues: read.locate(inlined.issues) };
  return { ok: true, workflow: inlined.workflow, name: parsed.workflow.name ?? workflowName(path), locate: read.locate, warnings: read.warnings };
};

/** Reads a child workflow file for a workflow node; a registered name needs the API's registry (`flowmend serve`, AWS). */
const childFileLoader =
  (options: PflowFormOptions, limits: Limits): ChildLoader =>
  async (source) => {
    if (source.kind === 'name') {
      return {
        ok: false,
        message:
          'the CLI runs workflow files and has no registry of named workflows: use workflow_ref (a path relative to this workflow), or start the run through the API (`flowmend serve`, `--api`)',
      };
    }
    const path = resolve(dirname(source.from), source.ref);
    const read = await readWorkflow(path, limits);
    if (!read.ok) return { ok: false, message: read.issues.map((i) => `${i.line === undefined ? '' : `${i.path}: `}${i.message}`).join('; ') };
    // pflow's forms (and an MCP config's servers) apply to a child as to the file given on the command line.
    const parsed = parseWorkflow(read.raw, options, limits);
    return { ok: true, raw: parsed.ok ? parsed.workflow : read.raw, origin: path };
  };

type ReadWorkflow = { ok: true; raw: unknown; locate: LocateIssues; warnings: ValidationIssue[] } | { ok: false; issues: ValidationIssue[] };

/** A `.pflow.md` compiled to pflow's IR; its parser (and the YAML library) load only for such a file. */
const readMarkdown = async (path: string, text: string): Promise<ReadWorkflow> => {
  const { parsePflowMarkdown, locateIssue } = await import('../../adapters/pflow-markdown/parse-pflow-markdown.ts');
  const parsed = parsePflowMarkdown(text, path);
  if (!parsed.ok) return parsed;
  return { ok: true, raw: parsed.raw, warnings: parsed.warnings, locate: (issues) => issues.map((i) => locateIssue(i, parsed.lines, path)) };
};

const readWorkflow = async (path: string, limits: Limits): Promise<ReadWorkflow> => {
  let text: string;
  try {
    // Synchronous: the CLI reads a file or two before anything else, and node:fs/promises costs ~2 ms to load here.
    const size = statSync(path).size;
    if (size > limits.maxIrBytes) {
      return {
        ok: false,
        issues: [
          {
            path,
            code: 'IR_TOO_LARGE',
            message: `workflow file '${path}' is ${size} bytes; the limit is ${limits.maxIrBytes}`,
            hint: `The limit is set by ${LIMIT_VARIABLES.maxIrBytes}`,
            severity: 'error',
          },
        ],
      };
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message;
    return { ok: false, issues: [{ path: path, code: 'FILE_UNREADABLE', message: `cannot read workflow file '${path}': ${why}`, severity: 'error' }] };
  }
  if (isMarkdownWorkflow(path)) return readMarkdown(path, text);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      issues: [
        {
          path,
          code: 'INVALID_JSON',
          message: `'${path}' is not valid JSON: ${(error as Error).message}`,
          hint: "flowmend reads JSON workflows and pflow's .pflow.md files",
          severity: 'error',
        },
      ],
    };
  }
  return { ok: true, raw, locate: asIs, warnings: [] };
};
