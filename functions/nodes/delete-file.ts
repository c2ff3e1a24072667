import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { DeleteFileParamsSchema, deleteFileSpec } from './file-specs.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { failedFor } from './workspace.ts';
import { deleteWorkspaceFile } from './workspace-files.ts';

/** A file already gone counts as deleted (`existed: false`), so a re-run after a crash succeeds. */
export const deleteFileRunner: NodeRunner<typeof DeleteFileParamsSchema> = {
  ...deleteFileSpec,
  paramsSchema: DeleteFileParamsSchema,
  run: async (params): Promise<RunnerResult> => {
    if (params.confirm_delete === false)
      return { kind: 'failed', error: { code: 'DELETE_NOT_CONFIRMED', message: 'confirm_delete is false: the file was not deleted' }, durationMs: 0 };
    const started = monotonicMs();
    try {
      const { path, existed } = await deleteWorkspaceFile(params.__workspace, params.file_path);
      return {
        kind: 'ok',
        outputs: { deleted: true, existed, file_path: path },
        action: 'default',
        durationMs: monotonicMs() - started,
      };
    } catch (error) {
      return failedFor(error, monotonicMs() - started);
    }
  },
};
