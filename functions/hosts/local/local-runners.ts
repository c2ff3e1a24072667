import { envLlmConfig } from '../../adapters/anthropic-client.ts';
import { makeAnthropicLlmClient } from '../../adapters/anthropic-llm-client.ts';
import { makeMcpTools } from '../../adapters/mcp-tools.ts';
import type { Limits, NodeRunner } from '../../core/index.ts';
import { makeLocalRunners, type RunnerPorts } from '../../nodes/catalog.ts';
import type { SpawnCommand } from '../../nodes/command-spawn.ts';

/** The runners' ports on a laptop: MCP servers over stdio or HTTP, and the Anthropic client, configured from the environment on every call (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, FLOWMEND_LLM_MODEL). */
export const envRunnerPorts = (env: NodeJS.ProcessEnv = process.env): RunnerPorts => ({
  llm: { config: envLlmConfig(env), client: makeAnthropicLlmClient() },
  mcp: { tools: makeMcpTools({ env, allowStdio: true }) },
});

/** Every node type the local host runs, wired to the environment. */
export const localRunners: readonly NodeRunner[] = makeLocalRunners(envRunnerPorts());

/** The local host's runners with the output limits given. */
export const localRunnersWithin = (
  limits: Pick<Limits, 'maxOutputBytes' | 'maxHttpResponseBytes'> | undefined,
  spawnCommand?: SpawnCommand,
): readonly NodeRunner[] => makeLocalRunners(envRunnerPorts(), limits, spawnCommand);
