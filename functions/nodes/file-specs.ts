import type { NodeTypeSpec } from '../core/index.ts';
import * as z from '../core/zod.ts';

/**
 * What the engine knows of the file nodes without touching a file: `flowmend validate` checks and
 * times them from these, and only the runners (read-file.ts, write-file.ts, copy-move-file.ts,
 * delete-file.ts, with workspace.ts) load node:fs/promises and node:crypto.
 */

/** Reserved param: the run's workspace, put there by the engine (see FILE_NODE_TYPES). */
export const WorkspaceParamSchema = z.optional(z.string());

export const pathParam = (name: string) =>
  z.string({ error: `${name} is required: a path in the workspace` }).check(z.minLength(1, `${name} must not be empty`));

export const ReadFileParamsSchema = z.strictObject({
  file_path: pathParam('file_path'),
  /** "utf-8" (text; a file that is not text comes back as base64) or "base64". */
  encoding: z._default(z.enum(['utf-8', 'utf8', 'base64', 'binary'], { error: 'encoding is "utf-8" or "base64"' }), 'utf-8'),
  max_bytes: z.optional(z.int().check(z.positive())),
  __workspace: WorkspaceParamSchema,
});

export const WriteFileParamsSchema = z.strictObject({
  file_path: pathParam('file_path'),
  /** Text, or base64 with content_is_binary; an object or array is written as JSON. */
  content: z.unknown().check(z.refine((v) => v !== undefined, 'content is required: what to write')),
  content_is_binary: z._default(z.boolean(), false),
  encoding: z._default(z.enum(['utf-8', 'utf8'], { error: 'encoding is "utf-8" (use content_is_binary for base64 data)' }), 'utf-8'),
  append: z._default(z.boolean(), false),
  __workspace: WorkspaceParamSchema,
});

export const CopyMoveParamsSchema = z.strictObject({
  source_path: pathParam('source_path'),
  dest_path: z.optional(pathParam('dest_path')),
  /** Another spelling of dest_path. */
  destination: z.optional(pathParam('destination')),
  overwrite: z._default(z.boolean(), false),
  __workspace: WorkspaceParamSchema,
});

export const DeleteFileParamsSchema = z.strictObject({
  file_path: pathParam('file_path'),
  /** pflow's safety switch, accepted as a param; false refuses. */
  confirm_delete: z.optional(z.boolean()),
  __workspace: WorkspaceParamSchema,
});

export const readFileSpec: NodeTypeSpec = {
  type: 'read-file',
  paramsSchema: ReadFileParamsSchema,
  outputKeys: ['content', 'content_is_binary', 'file_path', 'size_bytes'],
  sideEffects: () => false,
  timeoutS: () => 30,
};

export const writeFileSpec: NodeTypeSpec = {
  type: 'write-file',
  paramsSchema: WriteFileParamsSchema,
  outputKeys: ['written', 'file_path', 'bytes_written'],
  sideEffects: () => true,
  timeoutS: () => 30,
};

/** copy-file and move-file: the same params, pflow's `copied` / `moved` output. */
const copyMoveSpec = (kind: 'copy' | 'move'): NodeTypeSpec => ({
  type: `${kind}-file`,
  paramsSchema: CopyMoveParamsSchema,
  outputKeys: [kind === 'copy' ? 'copied' : 'moved', 'source_path', 'dest_path'],
  sideEffects: () => true,
  timeoutS: () => 60,
});
export const copyFileSpec: NodeTypeSpec = copyMoveSpec('copy');
export const moveFileSpec: NodeTypeSpec = copyMoveSpec('move');

export const deleteFileSpec: NodeTypeSpec = {
  type: 'delete-file',
  paramsSchema: DeleteFileParamsSchema,
  outputKeys: ['deleted', 'existed', 'file_path'],
  sideEffects: () => true,
  timeoutS: () => 30,
};
