import { builtOnFirstUse } from './lazy-schema.ts';
import * as z from './zod.ts';

/** One finding of parsing or static validation; `path` names the field, e.g. "nodes[1].params.command". */
export const ValidationIssueSchema = builtOnFirstUse(() =>
  z.object({
    path: z.string(),
    code: z.string(),
    message: z.string(),
    hint: z.optional(z.string()),
    severity: z.enum(['error', 'warning']),
    /** Where in the workflow's file (a `.pflow.md`), when the issue can be placed there: 1-based. */
    line: z.optional(z.int().check(z.positive())),
    column: z.optional(z.int().check(z.positive())),
  }),
);
export type ValidationIssue = z.infer<typeof ValidationIssueSchema>;

/** An issue of each severity, as validation and its nested-workflow checks build them. */
export const issueError = (path: string, code: string, message: string, hint?: string): ValidationIssue => ({
  path,
  code,
  message,
  severity: 'error',
  ...(hint ? { hint } : {}),
});
export const issueWarning = (path: string, code: string, message: string, hint?: string): ValidationIssue => ({
  path,
  code,
  message,
  severity: 'warning',
  ...(hint ? { hint } : {}),
});

const IDENTIFIER = /^[a-zA-Z_][\w-]*$/;

/** `["nodes", 1, "params", "command"]` as "nodes[1].params.command". */
export function formatIssuePath(segments: readonly PropertyKey[]): string {
  let text = '';
  for (const seg of segments) {
    if (typeof seg === 'number') text += `[${seg}]`;
    else if (typeof seg === 'string' && IDENTIFIER.test(seg)) text += text ? `.${seg}` : seg;
    else text += `[${JSON.stringify(String(seg))}]`;
  }
  return text;
}

/** Human text: one block per issue (message, where, hint), then a count. */
export function formatIssues(issues: readonly ValidationIssue[]): string {
  if (issues.length === 0) return 'No issues.';
  const blocks = issues.map((issue) => {
    const mark = issue.severity === 'error' ? '✗ error' : '⚠ warning';
    const lines = [`${mark}: ${issue.message}`, `    at ${issue.path || '(workflow)'} [${issue.code}]`];
    if (issue.hint) lines.push(`    hint: ${issue.hint}`);
    return lines.join('\n');
  });
  const errors = issues.filter((i) => i.severity === 'error').length;
  const warnings = issues.length - errors;
  const count = `${errors} error${errors === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}`;
  return `${blocks.join('\n')}\n${count}`;
}
