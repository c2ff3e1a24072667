import type { Workflow } from '../ir.ts';
import type { Nesting } from '../nested/validate-children.ts';
import { issueError as error, formatIssuePath, type ValidationIssue } from '../validation-issue.ts';

/**
 * Static checks of flow control (docs/flow-control.md): a node-level limit is not allowed on a batch node
 * (its items run in one Map; a limit per item is the batch's `parallel`), and a nested workflow has none of
 * its own, since its run cannot pause (its parent's execution drives it): put the limit on the parent.
 */
export function checkFlowControl(workflow: Workflow, nesting: Nesting): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  workflow.nodes.forEach((node, index) => {
    const at = (...path: (string | number)[]): string => formatIssuePath(['nodes', index, ...path]);
    for (const key of ['concurrency', 'rate_limit'] as const) {
      if (node[key] !== undefined && node.batch !== undefined) {
        issues.push(
          error(
            at(key),
            'FLOW_CONTROL_ON_BATCH',
            `Node '${node.id}': "${key}" is not allowed on a batch node`,
            'Limit the batch with its "parallel", or put the limit on a node of its own',
          ),
        );
      }
      if (node[key] !== undefined && nesting.depth > 0) {
        issues.push(
          error(
            at(key),
            'FLOW_CONTROL_IN_CHILD_WORKFLOW',
            `Node '${node.id}': a nested workflow's node cannot wait for "${key}"; its parent's execution drives it`,
            'Put the limit on the parent workflow (on its workflow node, or on the whole workflow)',
          ),
        );
      }
    }
  });
  if (nesting.depth > 0) {
    for (const key of ['concurrency', 'debounce', 'singleton'] as const) {
      if (workflow[key] !== undefined) {
        issues.push(
          error(
            key,
            'FLOW_CONTROL_IN_CHILD_WORKFLOW',
            `A nested workflow cannot have "${key}": its run is driven by its parent's`,
            'Put it on the parent workflow',
          ),
        );
      }
    }
  }
  return issues;
}
