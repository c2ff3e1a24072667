import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { ReadFileParamsSchema, readFileSpec } from './file-specs.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { failedFor } from './workspace.ts';
import { readWorkspaceFile } from './workspace-files.ts';

/** Larger files would not fit a run record even as a blob reference worth keeping; read them with a shell node. */
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;

const isText = (data: Buffer): boolean => !data.includes(0) && Buffer.from(data.toString('utf8'), 'utf8').equals(data);

export const readFileRunner: NodeRunner<typeof ReadFileParamsSchema> = {
  ...readFileSpec,
  paramsSchema: ReadFileParamsSchema,
  run: async (params): Promise<RunnerResult> => {
    const started = monotonicMs();
    try {
      const max = params.max_bytes ?? DEFAULT_MAX_BYTES;
      const { path, size, data } = await readWorkspaceFile(params.__workspace, params.file_path, max);
      if (data === undefined) {
        return {
          kind: 'failed',
          error: {
            code: 'FILE_TOO_LARGE',
            message: `'${params.file_path}' is ${size} bytes, more than max_bytes ${max}`,
            details: { size_bytes: size, max_bytes: max },
          },
          durationMs: monotonicMs() - started,
        };
      }
      const binary = params.encoding === 'base64' || params.encoding === 'binary' || !isText(data);
      return {
        kind: 'ok',
        outputs: { content: binary ? data.toString('base64') : data.toString('utf8'), content_is_binary: binary, file_path: path, size_bytes: data.length },
        action: 'default',
        durationMs: monotonicMs() - started,
      };
    } catch (error) {
      return failedFor(error, monotonicMs() - started);
    }
  },
};
