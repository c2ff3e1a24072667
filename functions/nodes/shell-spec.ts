import * as z from 'zod';
import type { NodeTypeSpec } from '../core/index.ts';

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
  command: z.string({ error: 'command is required: a string run by /bin/sh -c' }).min(1, 'command must not be empty'),
  stdin: z.unknown().optional(),
  env: z.record(z.string(), EnvValueSchema, { error: 'env must be an object of NAME: value' }).optional(),
  cwd: z.string({ error: 'cwd must be a directory path (string)' }).min(1, 'cwd must not be empty').optional(),
  timeout_s: z.number({ error: 'timeout_s must be a number of seconds' }).positive('timeout_s must be greater than 0').optional(),
  /** pflow's spelling of timeout_s. */
  timeout: z.number({ error: 'timeout must be a number of seconds' }).positive('timeout must be greater than 0').optional(),
  ignore_errors: z.boolean({ error: 'ignore_errors must be true or false' }).default(false),
  /** pflow's option: drop one trailing newline from stdout and stderr so `${a.stdout}` reads well in text. */
  strip_newline: z.boolean({ error: 'strip_newline must be true or false' }).default(true),
  /**
   * Substitute template values into `command` as shell code instead of quoting each one as data.
   * Only for a workflow that builds commands on purpose; `validate` warns on it.
   */
  raw: z.boolean({ error: 'raw must be true or false' }).default(false),
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
