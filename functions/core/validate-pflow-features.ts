import type { Workflow } from './ir.ts';
import { findTemplates } from './templates.ts';
import { issueError as error, formatIssuePath, type ValidationIssue } from './validation-issue.ts';

/** Node settings pflow has that this version does not run yet, refused rather than silently ignored. */
const NOT_YET: Readonly<Record<string, string>> = {
  prompt_cache: "pflow's prompt caching is not supported by this version of flowmend: put the shared context in the llm node's system or prompt",
};

/**
 * Checks of what pflow's 2026 IR added: at most one `stdin` input and one `stdout` output, `loop` not
 * with `batch`, `prompt_cache` only on llm nodes and only naming `## Cache` chunks, in their order.
 */
export function checkPflowFeatures(workflow: Workflow): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const [section, key, what] of [
    ['inputs', 'stdin', 'input'],
    ['outputs', 'stdout', 'output'],
  ] as const) {
    const marked = Object.entries(workflow[section]).filter(([, spec]) => (spec as Record<string, unknown>)[key] === true);
    if (marked.length > 1) {
      issues.push(
        error(
          formatIssuePath([section, (marked[1] as [string, unknown])[0], key]),
          `MULTIPLE_${key.toUpperCase()}`,
          `Only one ${what} may have "${key}": true (${marked.map(([name]) => `'${name}'`).join(', ')} do)`,
          `Keep "${key}": true on one ${what}`,
        ),
      );
    }
  }
  workflow.nodes.forEach((node, index) => {
    const at = (key: string): string => formatIssuePath(['nodes', index, key]);
    for (const [key, why] of Object.entries(NOT_YET)) {
      if ((node as Record<string, unknown>)[key] !== undefined) issues.push(error(at(key), 'UNSUPPORTED_KEY', `Node '${node.id}': ${why}`));
    }
    if (node.loop !== undefined && node.batch !== undefined) {
      issues.push(error(at('loop'), 'LOOP_WITH_BATCH', `Node '${node.id}' has both "loop" and "batch"`, 'A node either loops or runs per item: keep one'));
    }
    const condition = node.loop?.while ?? node.loop?.until;
    if (condition !== undefined) {
      const [ref] = findTemplates(condition);
      if (ref === undefined || ref.root !== node.id || ref.path.length === 0) {
        issues.push(
          error(
            formatIssuePath(['nodes', index, 'loop', node.loop?.while !== undefined ? 'while' : 'until']),
            'LOOP_CONDITION_NOT_OWN_OUTPUT',
            `Node '${node.id}': the loop's condition ${condition} must name one of this node's own outputs`,
            `Compute a boolean in the node and name it, e.g. "\${${node.id}.${node.type === 'code' ? 'result.done' : 'stdout'}}"`,
          ),
        );
      }
    }
    if (node.prompt_cache !== undefined && node.type !== 'llm') {
      issues.push(error(at('prompt_cache'), 'PROMPT_CACHE_NOT_LLM', `Node '${node.id}' (${node.type}): "prompt_cache" applies to llm nodes only`));
    }
  });
  return issues;
}
