import { isEngineVariable } from '../core/index.ts';

/**
 * The environment a user command runs with: a short allow-list of the engine's own variables (what a
 * command needs to behave like one typed in a terminal) plus the node's `env`. Everything else, and
 * above all the engine's credentials (AWS_*, ANTHROPIC_*, FLOWMEND_*), stays out.
 */
export const DEFAULT_COMMAND_ENV_ALLOW_LIST: readonly string[] = [
  'PATH',
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'LANG',
  'LANGUAGE',
  'LC_ALL',
  'LC_CTYPE',
  'LC_MESSAGES',
  'LC_NUMERIC',
  'LC_TIME',
  'LC_COLLATE',
  'TZ',
  'TMPDIR',
  'TERM',
  'PWD',
];

/** Extra names to pass through, comma-separated (`FLOWMEND_COMMAND_ENV=HTTP_PROXY,NO_PROXY`). */
export const COMMAND_ENV_VARIABLE = 'FLOWMEND_COMMAND_ENV';

export const commandEnvAllowList = (engineEnv: NodeJS.ProcessEnv): string[] => [
  ...DEFAULT_COMMAND_ENV_ALLOW_LIST,
  ...(engineEnv[COMMAND_ENV_VARIABLE] ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== ''),
];

export function commandEnvironment(
  engineEnv: NodeJS.ProcessEnv,
  nodeEnv: Readonly<Record<string, string | number | boolean>>,
  allowList: readonly string[] = commandEnvAllowList(engineEnv),
): Record<string, string> {
  const env: Record<string, string> = Object.create(null);
  for (const name of allowList) {
    const value = engineEnv[name];
    if (value !== undefined && !isEngineVariable(name)) env[name] = value;
  }
  // What the node sets explicitly is the workflow's decision, credentials included.
  for (const [name, value] of Object.entries(nodeEnv)) env[name] = String(value);
  return env;
}
