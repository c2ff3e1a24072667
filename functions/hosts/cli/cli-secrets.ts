import type { Workflow } from '../../core/index.ts';

/** The variable a secret input is read from: `FLOWMEND_SECRET_API_TOKEN` for `api_token` or `api-token`. */
export const secretVariable = (name: string): string => `FLOWMEND_SECRET_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** Secret inputs the CLI is given (as name=value or FLOWMEND_SECRET_<NAME>); not those a runner reads `from` a secret store. */
export const secretInputNames = (workflow: Workflow): string[] =>
  Object.entries(workflow.inputs)
    .filter(([, spec]) => spec.secret === true && spec.from === undefined)
    .map(([name]) => name);

/** The engine's own credentials, redacted from everything it prints or stores. */
export const engineSecrets = (env: Readonly<Record<string, string | undefined>>): (string | undefined)[] => [
  env.ANTHROPIC_API_KEY,
  env.AWS_SECRET_ACCESS_KEY,
  env.AWS_SESSION_TOKEN,
];
