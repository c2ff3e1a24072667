import { rm, stat } from 'node:fs/promises';
import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { DeleteFileParamsSchema, deleteFileSpec } from './file-specs.ts';
import { failedFor, resolveInWorkspace, WorkspacePathError } from './workspace.ts';

/** A file already gone counts as deleted (`existed: false`), so a re-run after a crash succeeds. */
export const deleteFileRunner: NodeRunner<typeof DeleteFileParamsSchema> = {
  ...deleteFileSpec,
  paramsSchema: DeleteFileParamsSchema,
  run: async (params): Promise<RunnerResult> => {
    if (params.confirm_delete === false)
      return { kind: 'failed', error: { code: 'DELETE_NOT_CONFIRMED', message: 'confirm_delete is false: the file was not deleted' }, durationMs: 0 };
    const started = performance.now();
    try {
      const path = await resolveInWorkspace(params.__workspace, params.file_path);
      const info = await stat(path).catch(() => undefined);
      if (info !== undefined && !info.isFile()) throw new WorkspacePathError('NOT_A_FILE', `'${params.file_path}' is not a regular file`, params.file_path);
      await rm(path, { force: true });
      return {
        kind: 'ok',
        outputs: { deleted: true, existed: info !== undefined, file_path: path },
        action: 'default',
        durationMs: performance.now() - started,
      };
    } catch (error) {
      return failedFor(error, performance.now() - started);
    }
  },
};
