import { type Limits, makeCatalog, type NodeCatalog, type NodeRunner } from '../core/index.ts';
import { codeRunner } from './code.ts';
import type { SpawnCommand } from './command-spawn.ts';
import { copyFileRunner, moveFileRunner } from './copy-move-file.ts';
import { deleteFileRunner } from './delete-file.ts';
import { httpRunner, makeHttpRunner } from './http.ts';
import { type LlmRunnerDeps, makeLlmRunner } from './llm.ts';
import { type McpRunnerDeps, makeMcpRunner } from './mcp.ts';
import { readFileRunner } from './read-file.ts';
import { makeShellRunner, shellRunner } from './shell.ts';
import { builtinSpecs } from './specs.ts';
import { transformRunner } from './transform.ts';
import { engineNodeSpecs } from './workflow.ts';
import { writeFileRunner } from './write-file.ts';

/** What runners reach the outside through, injected by the host that composes them (adapters live there, not here). */
export interface RunnerPorts {
  llm: LlmRunnerDeps;
  mcp: McpRunnerDeps;
}

/** The node types both hosts run (each has a runner Lambda on AWS; code's is a Python one, run_code.py). */
export const makeBuiltinRunners = (ports: RunnerPorts): readonly NodeRunner[] => [
  shellRunner,
  transformRunner,
  httpRunner,
  makeLlmRunner(ports.llm),
  makeMcpRunner(ports.mcp),
  codeRunner,
];

/** The file family: the local host only (a run there has a workspace; see FILE_NODE_TYPES). */
export const fileRunners: readonly NodeRunner[] = [readFileRunner, writeFileRunner, copyFileRunner, moveFileRunner, deleteFileRunner];

/** The builtin node types as validation and the engine see them (reading a spec needs no port). */
export const builtinCatalog: NodeCatalog = makeCatalog([...builtinSpecs, ...engineNodeSpecs]);
export const localCatalog: NodeCatalog = makeCatalog([...builtinSpecs, ...fileRunners, ...engineNodeSpecs]);

/** What the local host runs: every builtin type and the file family, with the output limits given (the CLI reads them from its environment). */
export const makeLocalRunners = (
  ports: RunnerPorts,
  limits?: Pick<Limits, 'maxOutputBytes' | 'maxHttpResponseBytes'>,
  /** How shell commands start (default: from this process; `serve` gives its command helper's). */
  spawnCommand?: SpawnCommand,
): readonly NodeRunner[] => [
  limits || spawnCommand
    ? makeShellRunner({ ...(limits ? { maxOutputBytes: limits.maxOutputBytes } : {}), ...(spawnCommand ? { spawnCommand } : {}) })
    : shellRunner,
  transformRunner,
  limits ? makeHttpRunner({ maxResponseBytes: limits.maxHttpResponseBytes }) : httpRunner,
  makeLlmRunner(ports.llm),
  makeMcpRunner(ports.mcp),
  // pflow's code node: python3 where the local host runs.
  codeRunner,
  ...fileRunners,
];
