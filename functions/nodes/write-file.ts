import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { WriteFileParamsSchema, writeFileSpec } from './file-specs.ts';
import { monotonicMs } from './monotonic-clock.ts';
import { failedFor } from './workspace.ts';
import { writeWorkspaceFile } from './workspace-files.ts';

const bytesOf = (content: unknown, binary: boolean): Buffer => {
  if (binary && typeof content === 'string') return Buffer.from(content, 'base64');
  if (typeof content === 'string') return Buffer.from(content, 'utf8');
  return Buffer.from(JSON.stringify(content, null, 2), 'utf8');
};

/**
 * Writes atomically (temp + rename), appends too: the old content and the new are written as one new
 * file. A completed write is recorded and replayed, never done twice; only a crash between the rename
 * and that record runs it again, which rewrites the same bytes (and, with append, appends again).
 */
export const writeFileRunner: NodeRunner<typeof WriteFileParamsSchema> = {
  ...writeFileSpec,
  paramsSchema: WriteFileParamsSchema,
  run: async (params): Promise<RunnerResult> => {
    const started = monotonicMs();
    try {
      const data = bytesOf(params.content, params.content_is_binary);
      const path = await writeWorkspaceFile(params.__workspace, params.file_path, data, params.append);
      return {
        kind: 'ok',
        outputs: { written: true, file_path: path, bytes_written: data.length },
        action: 'default',
        durationMs: monotonicMs() - started,
      };
    } catch (error) {
      return failedFor(error, monotonicMs() - started);
    }
  },
};
