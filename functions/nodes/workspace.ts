import type { RunnerResult } from '../core/index.ts';

export const NO_WORKSPACE =
  'file nodes need a workspace: they run on the local host (flowmend run, --workspace DIR); on AWS there is none, so move data with http or mcp nodes instead';

/** A path refused or missing: data the repairer can act on. */
export class WorkspacePathError extends Error {
  constructor(
    readonly code: 'PATH_OUTSIDE_WORKSPACE' | 'FILE_NOT_FOUND' | 'FILE_EXISTS' | 'NOT_A_FILE' | 'TOO_MANY_LINKS',
    message: string,
    readonly path: string,
  ) {
    super(message);
  }
}

export const failedFor = (error: unknown, durationMs = 0): RunnerResult => {
  if (!(error instanceof WorkspacePathError)) throw error;
  return { kind: 'failed', error: { code: error.code, message: error.message, details: { path: error.path } }, durationMs };
};
