import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { CopyMoveParamsSchema, copyFileSpec, moveFileSpec } from './file-specs.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { failedFor } from './workspace.ts';
import { copyWorkspaceFile, moveWorkspaceFile } from './workspace-files.ts';

/** copy-file and move-file: the same params, pflow's `copied` / `moved` output. */
const makeCopyMoveRunner = (kind: 'copy' | 'move'): NodeRunner<typeof CopyMoveParamsSchema> => {
  const flag = kind === 'copy' ? 'copied' : 'moved';
  return {
    ...(kind === 'copy' ? copyFileSpec : moveFileSpec),
    paramsSchema: CopyMoveParamsSchema,
    run: async (params): Promise<RunnerResult> => {
      const started = monotonicMs();
      const destParam = params.dest_path ?? params.destination;
      if (destParam === undefined)
        return { kind: 'failed', error: { code: 'PARAMS_INVALID', message: `${kind}-file needs dest_path: where the file goes` }, durationMs: 0 };
      try {
        const [source, dest] = await (kind === 'move' ? moveWorkspaceFile : copyWorkspaceFile)(
          params.__workspace,
          params.source_path,
          destParam,
          params.overwrite,
        );
        return { kind: 'ok', outputs: { [flag]: true, source_path: source, dest_path: dest }, action: 'default', durationMs: monotonicMs() - started };
      } catch (error) {
        return failedFor(error, monotonicMs() - started);
      }
    },
  };
};

export const copyFileRunner: NodeRunner<typeof CopyMoveParamsSchema> = makeCopyMoveRunner('copy');
export const moveFileRunner: NodeRunner<typeof CopyMoveParamsSchema> = makeCopyMoveRunner('move');
