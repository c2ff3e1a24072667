import { readFileSync } from 'node:fs';
import type { Workflow } from '../../core/index.ts';

/** The variable a secret input is read from: `FLOWMEND_SECRET_API_TOKEN` for `api_token` or `api-token`. */
export const secretVariable = (name: string): string => `FLOWMEND_SECRET_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** Secret inputs the CLI is given (as name=value or FLOWMEND_SECRET_<NAME>); not those a runner reads `from` a secret store. */
export const secretInputNames = (workflow: Workflow): string[] =>
  Object.entries(workflow.inputs)
    .filter(([, spec]) => spec.secret === true && spec.from === undefined)
    .map(([name]) => name);

export type SecretRead = { ok: true; value: string | undefined } | { ok: false; message: string };

/**
 * A secret input's value from the environment: FLOWMEND_SECRET_<NAME>, else the file FLOWMEND_SECRET_<NAME>_FILE
 * names (one trailing newline dropped, as `echo` and editors leave one), the way container secrets are mounted.
 * Neither sits in the process's argv, which every user of the machine can read.
 */
export const readSecretInput = (name: string, env: Readonly<Record<string, string | undefined>>): SecretRead => {
  const variable = secretVariable(name);
  const value = env[variable];
  if (value !== undefined) return { ok: true, value };
  const path = env[`${variable}_FILE`];
  if (path === undefined) return { ok: true, value: undefined };
  try {
    return { ok: true, value: readFileSync(path, 'utf8').replace(/\r?\n$/, '') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { ok: false, message: `${variable}_FILE names '${path}', which cannot be read (${code ?? (error as Error).message}), for secret input '${name}'` };
  }
};

/**
 * An input problem as the CLI words it: a missing secret input is set in its variables, not as
 * name=value (core's words, which the CLI would then warn about). Other problems are kept.
 */
export const cliInputProblem = <P extends { input?: string; message: string }>(
  workflow: Workflow,
  problem: P,
  params: Readonly<Record<string, unknown>>,
): P => {
  const name = problem.input;
  if (name === undefined || params[name] !== undefined || !secretInputNames(workflow).includes(name)) return problem;
  const variable = secretVariable(name);
  const about = workflow.inputs[name]?.description;
  return {
    ...problem,
    message: `missing secret input '${name}'${about ? ` (${about})` : ''}: set ${variable}, or ${variable}_FILE to a file holding it (not ${name}=..., which other users of this machine can read in the process list)`,
  };
};

/** The engine's own credentials, redacted from everything it prints or stores. */
export const engineSecrets = (env: Readonly<Record<string, string | undefined>>): (string | undefined)[] => [
  env.ANTHROPIC_API_KEY,
  env.AWS_SECRET_ACCESS_KEY,
  env.AWS_SESSION_TOKEN,
];
