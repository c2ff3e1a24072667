import { randomBytes } from 'node:crypto';
import { lstat, mkdir, open, realpath, rename, rm } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { RunnerResult } from '../core/index.ts';
import { ConfigurationError } from '../core/index.ts';

export const NO_WORKSPACE =
  'file nodes need a workspace: they run on the local host (flowmend run, --workspace DIR); on AWS there is none, so move data with http or mcp nodes instead';

/** A path refused or missing: data the repairer can act on. */
export class WorkspacePathError extends Error {
  constructor(
    readonly code: 'PATH_OUTSIDE_WORKSPACE' | 'FILE_NOT_FOUND' | 'FILE_EXISTS' | 'NOT_A_FILE',
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

const inside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

const realOrUndefined = async (path: string): Promise<string | undefined> => {
  try {
    return await realpath(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
};

/**
 * Resolves a node's path inside the workspace, or refuses it: relative paths are taken from the
 * workspace; `..`, an absolute path elsewhere, or a symlink (of the file or any parent) leading
 * out are refused. Checked on real paths, so a link planted inside cannot point the write outside.
 */
export const resolveInWorkspace = async (workspace: string | undefined, path: string): Promise<string> => {
  if (workspace === undefined) throw new ConfigurationError(NO_WORKSPACE);
  const root = await realpath(workspace);
  const target = resolve(root, path);
  const outside = () =>
    new WorkspacePathError('PATH_OUTSIDE_WORKSPACE', `'${path}' is outside the workspace ${root}: file nodes read and write only under it`, path);
  if (!inside(root, target)) throw outside();
  const real = await realOrUndefined(target);
  if (real !== undefined) {
    if (!inside(root, real)) throw outside();
    return target;
  }
  // A new file: its nearest existing ancestor must be inside too (a symlinked directory may lead out).
  let parent = dirname(target);
  for (;;) {
    const realParent = await realOrUndefined(parent);
    if (realParent !== undefined) {
      if (!inside(root, realParent)) throw outside();
      return target;
    }
    parent = dirname(parent);
  }
};

export const exists = async (path: string): Promise<boolean> => {
  try {
    await lstat(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
};

/** Writes a file atomically: a temp file beside it, flushed, then renamed over it; a reader never sees half a file. */
export const writeAtomic = async (path: string, data: Buffer): Promise<void> => {
  await mkdir(dirname(path), { recursive: true });
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
};
