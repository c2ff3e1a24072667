import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rename, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { CopyMoveParamsSchema, copyFileSpec, moveFileSpec } from './file-specs.ts';
import { exists, failedFor, resolveInWorkspace, WorkspacePathError } from './workspace.ts';

/** copy-file and move-file: the same params, pflow's `copied` / `moved` output. */
const makeCopyMoveRunner = (kind: 'copy' | 'move'): NodeRunner<typeof CopyMoveParamsSchema> => {
  const flag = kind === 'copy' ? 'copied' : 'moved';
  return {
    ...(kind === 'copy' ? copyFileSpec : moveFileSpec),
    paramsSchema: CopyMoveParamsSchema,
    run: async (params): Promise<RunnerResult> => {
      const started = performance.now();
      const destParam = params.dest_path ?? params.destination;
      if (destParam === undefined)
        return { kind: 'failed', error: { code: 'PARAMS_INVALID', message: `${kind}-file needs dest_path: where the file goes` }, durationMs: 0 };
      try {
        const source = await resolveInWorkspace(params.__workspace, params.source_path);
        const dest = await resolveInWorkspace(params.__workspace, destParam);
        const info = await stat(source).catch(() => undefined);
        if (info === undefined) throw new WorkspacePathError('FILE_NOT_FOUND', `no file '${params.source_path}' in the workspace`, params.source_path);
        if (!info.isFile()) throw new WorkspacePathError('NOT_A_FILE', `'${params.source_path}' is not a regular file`, params.source_path);
        if (!params.overwrite && (await exists(dest))) {
          throw new WorkspacePathError('FILE_EXISTS', `'${destParam}' already exists: set "overwrite": true to replace it`, destParam);
        }
        await mkdir(dirname(dest), { recursive: true });
        if (kind === 'move') {
          await rename(source, dest);
        } else {
          // Through a temp file and a rename, so the destination is never half-written.
          const temp = join(dirname(dest), `.${basename(dest)}.${randomBytes(6).toString('hex')}.tmp`);
          await copyFile(source, temp);
          await rename(temp, dest);
        }
        return { kind: 'ok', outputs: { [flag]: true, source_path: source, dest_path: dest }, action: 'default', durationMs: performance.now() - started };
      } catch (error) {
        return failedFor(error, performance.now() - started);
      }
    },
  };
};

export const copyFileRunner: NodeRunner<typeof CopyMoveParamsSchema> = makeCopyMoveRunner('copy');
export const moveFileRunner: NodeRunner<typeof CopyMoveParamsSchema> = makeCopyMoveRunner('move');
