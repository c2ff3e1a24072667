import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CliIo, runCli } from '../../functions/hosts/cli/commands.ts';

export interface CliSandbox {
  /** A scratch directory for workflow files and side-effect markers. */
  dir: string;
  stateDir: string;
  /** The CLI's own code in this process with `--output-format json` on this sandbox's state dir. */
  json: <T = Record<string, unknown>>(argv: string[]) => Promise<{ code: number; json: T }>;
  /** Removes everything. */
  cleanup: () => Promise<void>;
}

/** The CLI's own code in this process with `--output-format json` on `stateDir`, its stdout parsed. */
export const runCliJson = async <T = Record<string, unknown>>(
  stateDir: string,
  argv: string[],
  hostOptions?: CliIo['hostOptions'],
): Promise<{ code: number; json: T }> => {
  let stdout = '';
  const code = await runCli([...argv, '--state-dir', stateDir, '--output-format', 'json'], {
    stdout: (t) => (stdout += t),
    stderr: () => {},
    env: {},
    ...(hostOptions ? { hostOptions } : {}),
  });
  return { code, json: JSON.parse(stdout) as T };
};

export const makeCliSandbox = (prefix: string): CliSandbox => {
  const dir = mkdtempSync(join(tmpdir(), `flowmend-${prefix}-`));
  const stateDir = join(dir, 'state');
  return {
    dir,
    stateDir,
    json: <T>(argv: string[]) => runCliJson<T>(stateDir, argv),
    cleanup: async () => {
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
