import type { NodeTypeSpec } from '../core/index.ts';
import * as z from '../core/zod.ts';

/**
 * What the engine knows of the shell node without spawning anything: `flowmend validate`, the
 * Advance and StartRun Lambdas check and time shell nodes from this, and only the runner (shell.ts)
 * loads node:child_process and the process-group bookkeeping.
 */
const DEFAULT_TIMEOUT_S = 60;

const EnvValueSchema = z.union([z.string(), z.number(), z.boolean()], {
  error: 'env values must be strings, numbers or booleans',
});

export const ShellParamsSchema = z.strictObject({
  command: z.string({ error: 'command is required: a string run by /bin/sh -c' }).check(z.minLength(1, 'command must not be empty')),
  stdin: z.optional(z.unknown()),
  env: z.optional(z.record(z.string(), EnvValueSchema, { error: 'env must be an object of NAME: value' })),
  cwd: z.optional(z.string({ error: 'cwd must be a directory path (string)' }).check(z.minLength(1, 'cwd must not be empty'))),
  /** Reserved: the run's workspace, put there by the engine on the local host; the command runs there (or in `cwd` relative to it). */
  __workspace: z.optional(z.string()),
  timeout_s: z.optional(z.number({ error: 'timeout_s must be a number of seconds' }).check(z.positive('timeout_s must be greater than 0'))),
  /** pflow's spelling of timeout_s. */
  timeout: z.optional(z.number({ error: 'timeout must be a number of seconds' }).check(z.positive('timeout must be greater than 0'))),
  ignore_errors: z._default(z.boolean({ error: 'ignore_errors must be true or false' }), false),
  /** pflow's option: drop one trailing newline from stdout and stderr so `${a.stdout}` reads well in text. */
  strip_newline: z._default(z.boolean({ error: 'strip_newline must be true or false' }), true),
  /**
   * Substitute template values into `command` as shell code instead of quoting each one as data.
   * Only for a workflow that builds commands on purpose; `validate` warns on it.
   */
  raw: z._default(z.boolean({ error: 'raw must be true or false' }), false),
});
export type ShellParams = z.infer<typeof ShellParamsSchema>;

export const timeoutOf = (params: Record<string, unknown>): number => {
  const value = params.timeout_s ?? params.timeout;
  return typeof value === 'number' && value > 0 ? value : DEFAULT_TIMEOUT_S;
};

export const shellSpec: NodeTypeSpec = {
  type: 'shell',
  paramsSchema: ShellParamsSchema,
  outputKeys: ['stdout', 'stderr', 'exit_code'],
  sideEffects: () => true,
  templateQuoting: (params): Readonly<Record<string, 'shell'>> => (params.raw === true ? {} : { command: 'shell' }),
  timeoutS: timeoutOf,
};
