import { DEFAULT_LIMITS, LIMIT_VARIABLES, type Limits } from './limits.ts';
import { formatIssuePath, type ValidationIssue } from './validation-issue.ts';

const issue = (path: readonly PropertyKey[], code: string, message: string, limit: keyof Limits): ValidationIssue => ({
  path: formatIssuePath(path),
  code,
  message,
  severity: 'error',
  hint: `The limit is set by ${LIMIT_VARIABLES[limit]}`,
});

/**
 * Checks the raw JSON of a workflow against the size limits before any schema or template code walks
 * it: without a bound, thousands of nested levels overflow the stack of every recursive walk after
 * this one. The walk is iterative and stops at the first problem of each kind. Sizes are JSON
 * lengths in characters, close to bytes for the ASCII that workflows mostly are.
 */
export function checkIrShape(raw: unknown, limits: Limits = DEFAULT_LIMITS): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  let size = 0;
  let deepReported = false;
  let longReported = false;
  const stack: { value: unknown; path: PropertyKey[] }[] = [{ value: raw, path: [] }];
  while (stack.length > 0) {
    const { value, path } = stack.pop() as { value: unknown; path: PropertyKey[] };
    if (typeof value === 'string') {
      size += value.length + 2;
      if (value.length > limits.maxStringChars && !longReported) {
        longReported = true;
        issues.push(
          issue(
            path,
            'STRING_TOO_LONG',
            `'${formatIssuePath(path)}' is a string of ${value.length} characters; the limit is ${limits.maxStringChars}`,
            'maxStringChars',
          ),
        );
      }
    } else if (value !== null && typeof value === 'object') {
      if (path.length >= limits.maxDepth) {
        if (!deepReported) {
          deepReported = true;
          issues.push(
            issue(
              path.slice(0, 6),
              'TOO_DEEP',
              `'${formatIssuePath(path.slice(0, 6))}' nests objects and arrays more than ${limits.maxDepth} levels deep`,
              'maxDepth',
            ),
          );
        }
        continue;
      }
      const entries = Array.isArray(value) ? value.map((v, i) => [i, v] as const) : Object.entries(value);
      size += 2;
      for (const [key, child] of entries) {
        size += typeof key === 'string' ? key.length + 4 : 1;
        stack.push({ value: child, path: [...path, key] });
      }
    } else {
      size += String(value).length;
    }
    if (size > limits.maxIrBytes) {
      issues.push(issue([], 'IR_TOO_LARGE', `the workflow is larger than ${limits.maxIrBytes} bytes`, 'maxIrBytes'));
      return issues;
    }
  }
  const nodes = raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>).nodes : undefined;
  if (Array.isArray(nodes)) {
    if (nodes.length > limits.maxNodes)
      issues.push(issue(['nodes'], 'TOO_MANY_NODES', `the workflow has ${nodes.length} nodes; the limit is ${limits.maxNodes}`, 'maxNodes'));
    nodes.forEach((node, index) => {
      const params = node !== null && typeof node === 'object' ? (node as Record<string, unknown>).params : undefined;
      if (params === undefined || deepReported) return;
      const bytes = JSON.stringify(params)?.length ?? 0;
      if (bytes > limits.maxParamsBytes)
        issues.push(
          issue(
            ['nodes', index, 'params'],
            'PARAMS_TOO_LARGE',
            `the params of nodes[${index}] take ${bytes} bytes; the limit is ${limits.maxParamsBytes}`,
            'maxParamsBytes',
          ),
        );
    });
  }
  return issues;
}
