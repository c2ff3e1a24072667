import type { Workflow } from './ir.ts';
import type { NodeCatalog } from './node-type.ts';
import { ShellContextScanner, ShellQuotingError } from './shell-quote.ts';
import { findTemplates } from './templates.ts';
import { formatIssuePath, type ValidationIssue } from './validation-issue.ts';

const TEMPLATE = /\$?\$\{[^}]*\}/g;

/** The first template of a command that stands where no quoting keeps it data, if any. */
function unquotableTemplate(command: string): string | undefined {
  const scanner = new ShellContextScanner();
  let last = 0;
  for (const m of command.matchAll(TEMPLATE)) {
    scanner.feed(command.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[0].startsWith('$$')) {
      scanner.feed(m[0].slice(1));
      continue;
    }
    try {
      scanner.context();
    } catch (error) {
      if (error instanceof ShellQuotingError) return m[0];
      throw error;
    }
    scanner.feedValue();
  }
  return undefined;
}

/**
 * Templates in quoted params (the shell command): a node that opted out of quoting (`raw: true`) gets a
 * warning, since its values run as shell code; a template where no quoting can work is an error.
 */
export function checkQuoting(workflow: Workflow, catalog: NodeCatalog): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  workflow.nodes.forEach((node, index) => {
    const spec = catalog.get(node.type);
    if (spec?.templateQuoting === undefined) return;
    const quoted = spec.templateQuoting(node.params);
    for (const param of Object.keys(spec.templateQuoting({}))) {
      const value = node.params[param];
      if (typeof value !== 'string' || findTemplates(value).length === 0) continue;
      const path = formatIssuePath(['nodes', index, 'params', param]);
      if (!Object.hasOwn(quoted, param)) {
        issues.push({
          path,
          code: 'RAW_SUBSTITUTION',
          severity: 'warning',
          message: `Node '${node.id}' substitutes values into '${param}' raw ("raw": true): a value holding shell syntax runs as code`,
          hint: 'Remove "raw": true to quote each value as data, or pass values through "env" or "stdin"',
        });
        continue;
      }
      const unquotable = unquotableTemplate(value);
      if (unquotable !== undefined) {
        issues.push({
          path,
          code: 'UNQUOTABLE_TEMPLATE',
          severity: 'error',
          message: `Node '${node.id}' param '${param}': ${unquotable} stands inside a here-document, where no quoting keeps a value data`,
          hint: 'Pass the value through "stdin" or "env" (e.g. "env": {"NAME": "${...}"} and "$NAME" in the command)',
        });
      }
    }
  });
  return issues;
}
