import { readParamsRef, shrinkRunnerResult } from '../../adapters/blob-upload.ts';
import type { NodeError, NodeRunner, RunnerResult } from '../../core/index.ts';
import {
  BatchItemSpecSchema,
  ConfigurationError,
  closestMatch,
  findSecretReferences,
  InvalidInputError,
  Redactor,
  type RunOutcome,
  RunOutcomeSchema,
  replaceSecretReferences,
  resolveSecretReferences,
  type SecretResolver,
} from '../../core/index.ts';
import type * as z from '../../core/zod.ts';

const MAX_LISTED_ISSUES = 10;

const describePath = (path: readonly PropertyKey[]): string =>
  path.map((part, i) => (typeof part === 'number' ? `[${part}]` : `${i === 0 ? '' : '.'}${String(part)}`)).join('');

/** One line per problem, naming the param and what is valid. */
export const describeParamIssues = (runner: NodeRunner, issues: readonly z.core.$ZodIssue[]): string => {
  // Params the engine fills in (`__workspace`, `__server`) are not a workflow's to write.
  const known = Object.keys(runner.paramsSchema.shape).filter((name) => !name.startsWith('__'));
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

export interface RunNodeOptions {
  /** Reads the secret inputs a node's params refer to (`from`): Secrets Manager and SSM on both hosts. */
  secrets?: SecretResolver;
  /** The local host's: the signal that stops this node call when its run is cancelled (kills the command's group, aborts the request). */
  signal?: (event: unknown) => AbortSignal | undefined;
}

/** Where params hold references but the host gave no resolver: a wiring bug, said plainly. */
const noSecrets: SecretResolver = {
  resolve: async (source) => {
    throw new ConfigurationError(`secret input ${source.service}:${source.name} cannot be read: this host has no secret resolver`);
  },
};

/**
 * A shell command is quoted by the engine for where each value stands; a secret put in afterwards would
 * not be. The command's environment is where a secret goes (`env`, then `"$NAME"`).
 */
const secretInCommand = (runner: NodeRunner, params: unknown): NodeError | undefined => {
  if (runner.type !== 'shell' || params === null || typeof params !== 'object') return undefined;
  const found = findSecretReferences((params as Record<string, unknown>).command);
  if (found.length === 0) return undefined;
  return {
    code: 'SECRET_IN_COMMAND',
    message: `a secret input read from ${found.map((s) => `${s.service}:${s.name}`).join(', ')} is in the shell command: pass it through the node's env ("env": {"TOKEN": "\${token}"}, then "$TOKEN")`,
  };
};

/**
 * A RunNode Task handler for one node type. Bad params come back as a repairable `failed` result;
 * a bad event throws InvalidInputError; TransientError and bugs propagate to the state machine.
 * Secret inputs (`from`) are read here, at use, and their values are redacted from all it returns or
 * throws, so they never reach the execution's data, the engine or the store.
 */
export const makeRunNodeHandler =
  (runner: NodeRunner, options: RunNodeOptions = {}) =>
  async (event: unknown): Promise<RunnerResult> => {
    const parsed = RunOutcomeSchema.safeParse(event);
    if (!parsed.success) {
      const problems = parsed.error.issues
        .slice(0, MAX_LISTED_ISSUES)
        .map((issue) => `${issue.path.length === 0 ? 'event' : `event.${describePath(issue.path)}`}: ${issue.message}`);
      throw new InvalidInputError(`Bad RunNode event: ${problems.join('; ')}`, { details: { issues: parsed.error.issues } });
    }
    const { node } = parsed.data;
    if (node.type !== runner.type) {
      throw new InvalidInputError(`Bad RunNode event: node "${node.id}" has type "${node.type}", this handler runs "${runner.type}"`);
    }
    // Large params come by reference (a presigned GET on AWS): the runner reads them, it has no store access.
    const raw: unknown = node.paramsRef ? await readParamsRef(node.paramsRef) : node.params;
    const misplaced = secretInCommand(runner, raw);
    if (misplaced) return { kind: 'failed', error: misplaced, durationMs: 0 };
    const secretValues = await resolveSecretReferences(raw, options.secrets ?? noSecrets);
    // Read by the runner when it asks (context.signal): a runner that never does makes no AbortSignal (CancelWatch).
    const signal = options.signal ? () => options.signal?.(event) : undefined;
    // A batch item's event carries its item: items of one node run side by side, each its own command.
    const item = typeof event === 'object' && event !== null && 'item' in event ? BatchItemSpecSchema.safeParse(event).data?.item.index : undefined;
    if (secretValues.size === 0) return shrinkRunnerResult(await runParsed(runner, raw, parsed.data, signal, item), node.upload);
    const redactor = new Redactor(secretValues.values());
    let result: RunnerResult;
    try {
      result = await runParsed(runner, replaceSecretReferences(raw, secretValues), parsed.data, signal, item);
    } catch (error) {
      // A thrown error's message becomes the execution's Cause: it must not carry a value either.
      if (error instanceof Error) error.message = redactor.text(error.message);
      throw error;
    }
    // Redacted before a large output goes up to the blob store, too.
    return shrinkRunnerResult(redactor.value(result), node.upload);
  };

const runParsed = async (
  runner: NodeRunner,
  raw: unknown,
  { runId, seq, node }: RunOutcome,
  signal: (() => AbortSignal | undefined) | undefined,
  item: number | undefined,
): Promise<RunnerResult> => {
  const params = runner.paramsSchema.safeParse(raw);
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
  const context = {
    runId,
    nodeId: node.id,
    seq,
    cacheKey: node.cacheKey,
    ...(item === undefined ? {} : { item }),
    ...(node.classification ? { classification: node.classification } : {}),
    ...(node.traceparent ? { traceparent: node.traceparent } : {}),
  };
  if (signal) Object.defineProperty(context, 'signal', { get: signal, enumerable: true });
  return runner.run(params.data, context);
};
