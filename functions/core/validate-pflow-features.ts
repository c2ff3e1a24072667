import type { Workflow } from './ir.ts';
import { findTemplates } from './templates.ts';
import { issueError as error, formatIssuePath, type ValidationIssue } from './validation-issue.ts';

/** A node's `prompt_cache` names `## Cache` chunks that exist, in the order they are declared (pflow's rule). */
function checkChunks(workflow: Workflow, nodeId: string, names: readonly string[], path: string): ValidationIssue[] {
  const declared = (workflow.cache?.items ?? []).map((item) => item.name);
  const listed = declared.length === 0 ? 'the workflow declares none (a ## Cache section with a ```cache block)' : `declared: ${declared.join(', ')}`;
  const unknown = names.filter((name) => !declared.includes(name));
  if (unknown.length > 0) {
    return [
      error(
        path,
        'PROMPT_CACHE_UNKNOWN_CHUNK',
        `Node '${nodeId}': prompt_cache names ${unknown.map((n) => `'${n}'`).join(', ')}, not a ## Cache chunk; ${listed}`,
      ),
    ];
  }
  const positions = names.map((name) => declared.indexOf(name));
  if (positions.some((p, i) => i > 0 && p <= (positions[i - 1] as number))) {
    return [
      error(
        path,
        'PROMPT_CACHE_ORDER',
        `Node '${nodeId}': prompt_cache lists ${names.join(', ')}; chunks are sent in the order ## Cache declares them, once each`,
        `Write them as declared: ${declared.filter((d) => names.includes(d)).join(', ')}`,
      ),
    ];
  }
  return [];
}

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
    if (node.prompt_cache !== undefined) issues.push(...checkChunks(workflow, node.id, node.prompt_cache, at('prompt_cache')));
  });
  return issues;
}
