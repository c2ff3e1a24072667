import { readFile } from 'node:fs/promises';
import * as z from 'zod';
import type { NodeRunner, RunnerResult } from '../core/index.ts';
import { exists, failedFor, pathParam, resolveInWorkspace, WorkspaceParamSchema, writeAtomic } from './workspace.ts';

export const WriteFileParamsSchema = z.strictObject({
  file_path: pathParam('file_path'),
  /** Text, or base64 with content_is_binary; an object or array is written as JSON. */
  content: z.unknown().refine((v) => v !== undefined, 'content is required: what to write'),
  content_is_binary: z.boolean().default(false),
  encoding: z.enum(['utf-8', 'utf8'], { error: 'encoding is "utf-8" (use content_is_binary for base64 data)' }).default('utf-8'),
  append: z.boolean().default(false),
  __workspace: WorkspaceParamSchema,
});

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
  type: 'write-file',
  paramsSchema: WriteFileParamsSchema,
  outputKeys: ['written', 'file_path', 'bytes_written'],
  sideEffects: () => true,
  timeoutS: () => 30,
  run: async (params): Promise<RunnerResult> => {
    const started = performance.now();
    try {
      const path = await resolveInWorkspace(params.__workspace, params.file_path);
      const data = bytesOf(params.content, params.content_is_binary);
      const before = params.append && (await exists(path)) ? await readFile(path) : Buffer.alloc(0);
      await writeAtomic(path, Buffer.concat([before, data]));
      return {
        kind: 'ok',
        outputs: { written: true, file_path: path, bytes_written: data.length },
        action: 'default',
        durationMs: performance.now() - started,
      };
    } catch (error) {
      return failedFor(error, performance.now() - started);
    }
  },
};
