import type { Workflow } from './ir.ts';
import { JsonataContextScanner } from './jsonata-templates.ts';
import type { NodeCatalog } from './node-type.ts';
import { ShellQuotingError } from './shell-quote.ts';
import { ShellContextScanner } from './shell-scanner.ts';
import { findTemplates } from './templates.ts';
import { formatIssuePath, type ValidationIssue } from './validation-issue.ts';

const TEMPLATE = /\$?\$\{[^}]*\}/g;

interface Placement {
  readonly template: string;
  readonly reason: string;
}

/** The first template of a command that stands where no quoting keeps it data, and why, if any. */
function unquotableInShell(command: string): Placement | undefined {
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
      if (error instanceof ShellQuotingError) return { template: m[0], reason: error.message };
      throw error;
    }
    scanner.feedValue();
  }
  return undefined;
}

/** The templates of a JSONata expression that stand as code (bound as variables), and the first in a `name`. */
function jsonataPlacements(expression: string): { asCode: string[]; inName: string | undefined } {
  const scanner = new JsonataContextScanner();
  const asCode: string[] = [];
  let inName: string | undefined;
  let last = 0;
  for (const m of expression.matchAll(TEMPLATE)) {
    scanner.feed(expression.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[0].startsWith('$$')) {
      scanner.feed(m[0].slice(1));
      continue;
    }
    const where = scanner.context();
    if (where === 'code') asCode.push(m[0]);
    if (where === 'name') inName ??= m[0];
    scanner.feedValue();
  }
  return { asCode, inName };
}

const RUNS_AS = { shell: 'shell code', jsonata: 'JSONata code' } as const;

/**
 * Templates in quoted params (the shell command, the transform expression): a node that opted out of
 * quoting (`raw: true`) gets a warning, since its values run as code; a template where no quoting can
 * work is an error; a template bound as a JSONata variable gets a warning saying so.
 */
export function checkQuoting(workflow: Workflow, catalog: NodeCatalog): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  workflow.nodes.forEach((node, index) => {
    const spec = catalog.get(node.type);
    if (spec?.templateQuoting === undefined) return;
    const quoted = spec.templateQuoting(node.params);
    for (const [param, kind] of Object.entries(spec.templateQuoting({}))) {
      const value = node.params[param];
      if (typeof value !== 'string' || findTemplates(value).length === 0) continue;
      const path = formatIssuePath(['nodes', index, 'params', param]);
      const at = `Node '${node.id}' param '${param}'`;
      if (!Object.hasOwn(quoted, param)) {
        issues.push({
          path,
          code: 'RAW_SUBSTITUTION',
          severity: 'warning',
          message: `Node '${node.id}' substitutes values into '${param}' raw ("raw": true): a value holding ${RUNS_AS[kind]} runs as code`,
          hint:
            kind === 'shell'
              ? 'Remove "raw": true to quote each value as data, or pass values through "env" or "stdin"'
              : 'Remove "raw": true to bind each value as data, or pass values through "input" or "bindings"',
        });
        continue;
      }
      if (kind === 'shell') {
        const unquotable = unquotableInShell(value);
        if (unquotable !== undefined) {
          issues.push({
            path,
            code: 'UNQUOTABLE_TEMPLATE',
            severity: 'error',
            message: `${at}: ${unquotable.template}: ${unquotable.reason}`,
            hint: 'Pass the value through "stdin" or "env" (e.g. "env": {"NAME": "${...}"} and "$NAME" in the command)',
          });
        }
        continue;
      }
      const { asCode, inName } = jsonataPlacements(value);
      if (inName !== undefined) {
        issues.push({
          path,
          code: 'UNQUOTABLE_TEMPLATE',
          severity: 'error',
          message: `${at}: ${inName} stands inside a \`backtick\` field name, which has no escapes`,
          hint: 'Look the field up with $lookup($, "${...}") or $lookup($, $name) and "bindings"',
        });
      }
      if (asCode.length > 0) {
        issues.push({
          path,
          code: 'TEMPLATE_BOUND_AS_DATA',
          severity: 'warning',
          message: `${at}: ${asCode.join(', ')} ${asCode.length === 1 ? 'is' : 'are'} bound as JSONata variables ($__flowmend_0...): each is a value, never pasted in as code`,
          hint: 'Name values in "bindings" ({"min": "${...}"} and $min) or read them from "input"; "raw": true pastes them in as code',
        });
      }
    }
  });
  return issues;
}
