import type * as z from 'zod';
import { closestMatch } from '../../core/index.ts';
import { InvalidInputError } from '../../core/index.ts';
import type { NodeRunner, RunnerResult } from '../../core/index.ts';
import { RunOutcomeSchema } from '../../core/index.ts';
import { readParamsRef, shrinkRunnerResult } from '../../adapters/blob-upload.ts';

const MAX_LISTED_ISSUES = 10;

const describePath = (path: readonly PropertyKey[]): string =>
  path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`)).join('');

/** One line per problem, naming the param and what is valid. */
export const describeParamIssues = (runner: NodeRunner, issues: readonly z.core.$ZodIssue[]): string => {
  const known = Object.keys(runner.paramsSchema.shape);
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      const names = issue.keys.map((key) => {
        const guess = closestMatch(key, known);
        return guess === undefined ? `"${key}"` : `"${key}" (did you mean "${guess}"?)`;
      });
      return `unknown param${names.length > 1 ? 's' : ''} ${names.join(', ')}; valid params: ${known.join(', ')}`;
    }
    return issue.path.length === 0 ? issue.message : `param "${describePath(issue.path)}": ${issue.message}`;
  });
  if (issues.length > MAX_LISTED_ISSUES) lines.push(`and ${issues.length - MAX_LISTED_ISSUES} more`);
  return `Invalid params for ${runner.type} node: ${lines.join('; ')}`;
};

/**
 * A RunNode Task handler for one node type. Bad params come back as a repairable `failed` result;
 * a bad event throws InvalidInputError; TransientError and bugs propagate to the state machine.
 */
export const makeRunNodeHandler =
  (runner: NodeRunner) =>
  async (event: unknown): Promise<RunnerResult> => {
    const parsed = RunOutcomeSchema.safeParse(event);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, MAX_LISTED_ISSUES)
        .map((issue) => `${issue.path.length === 0 ? 'event' : `event.${describePath(issue.path)}`}: ${issue.message}`);
      throw new InvalidInputError(`Bad RunNode event: ${problems.join('; ')}`, { details: { issues: parsed.error.issues } });
    }
    const { runId, seq, node } = parsed.data;
    if (node.type !== runner.type) {
      throw new InvalidInputError(`Bad RunNode event: node "${node.id}" has type "${node.type}", this handler runs "${runner.type}"`);
    }
    // Large params come by reference (a presigned GET on AWS): the runner reads them, it has no store access.
    const params = runner.paramsSchema.safeParse(node.paramsRef ? await readParamsRef(node.paramsRef) : node.params);
    if (!params.success) {
      return {
        kind: 'failed',
        error: {
          code: 'PARAMS_INVALID',
          message: describeParamIssues(runner, params.error.issues),
          details: { issues: params.error.issues.map((i) => ({ path: i.path.map(String), message: i.message })) },
        },
        durationMs: 0,
      };
    }
    const context = { runId, nodeId: node.id, seq, cacheKey: node.cacheKey, ...(node.classification ? { classification: node.classification } : {}) };
    return shrinkRunnerResult(await runner.run(params.data, context), node.upload);
  };
