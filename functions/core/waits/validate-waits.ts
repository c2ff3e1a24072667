import type { Workflow } from '../ir.ts';
import type { Nesting } from '../nested/validate-children.ts';
import { issueError as error, formatIssuePath, type ValidationIssue } from '../validation-issue.ts';
import { isWaitType, WAIT_TYPE, waitParamsProblem } from './wait-nodes.ts';

/**
 * Static checks of the nodes that pause a run (DESIGN 7b): a wait takes `seconds` or `until`, not both
 * (templated values are checked when they resolve); a wait or a gate cannot be batched (pflow refuses a
 * gate on a batch: it would ask per item, or once for items nobody saw); and a nested workflow's run
 * cannot pause, since the parent's execution drives it (as in pflow, whose gates in a child cannot pause).
 */
export function checkWaits(workflow: Workflow, nesting: Nesting): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  workflow.nodes.forEach((node, index) => {
    const at = (...path: (string | number)[]): string => formatIssuePath(['nodes', index, ...path]);
    const pauses = isWaitType(node.type) || node.approval !== undefined;
    if (node.approval !== undefined && node.batch !== undefined) {
      issues.push(
        error(
          at('approval'),
          'APPROVAL_ON_BATCH',
          `Node '${node.id}': "approval" is not allowed on a batch node`,
          'Put the gate on a node before the batch (it can show the items), or remove "batch"',
        ),
      );
    } else if (isWaitType(node.type) && node.batch !== undefined) {
      issues.push(error(at('batch'), 'BATCH_UNSUPPORTED', `Node '${node.id}' (${node.type}): a wait cannot be batched`, 'Remove "batch"'));
    }
    if (pauses && nesting.depth > 0) {
      issues.push(
        error(
          at(node.approval !== undefined ? 'approval' : 'type'),
          'WAIT_IN_CHILD_WORKFLOW',
          `Node '${node.id}': a nested workflow cannot pause (${node.approval !== undefined ? 'an approval gate' : `a ${node.type} node`}); its parent's execution drives it`,
          'Put the wait or the gate in the parent workflow, before or after the workflow node',
        ),
      );
    }
    // Which of the two is given is known before any template resolves.
    const problem = node.type === WAIT_TYPE ? waitParamsProblem(node.params) : undefined;
    if (problem)
      issues.push(
        error(at('params'), 'WAIT_PARAMS', `Node '${node.id}': ${problem}`, 'e.g. "params": {"seconds": 86400} or {"until": "2026-12-01T09:00:00Z"}'),
      );
  });
  return issues;
}
