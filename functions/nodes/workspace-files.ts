import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { type FileHandle, lstat, open, rename, rm, unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import { WorkspacePathError } from './workspace.ts';
import { type Placed, type PlaceOptions, placeInWorkspace } from './workspace-walk.ts';

/*
 * What the file nodes do to the workspace, each through placeInWorkspace (workspace-walk.ts): every
 * open, rename and unlink names its file through the directory the walk opened, with O_NOFOLLOW, so
 * nothing lands outside the workspace however its directories are swapped meanwhile.
 */

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK } = constants;

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/**
 * Resolves `path`, runs `use` on it and closes what the walk opened. A link that took the last name's place
 * after the walk (the open answers ELOOP), or, where the walk makes directories, a directory removed while
 * it was held (ENOENT), makes it walk again, at most a few times.
 */
const withPlaced = async <T>(workspace: string | undefined, path: string, options: PlaceOptions, use: (placed: Placed) => Promise<T>): Promise<T> => {
  for (let tries = 0; ; tries += 1) {
    const placed = await placeInWorkspace(workspace, path, options);
    try {
      return await use(placed);
    } catch (error) {
      const code = errnoOf(error);
      if (code !== 'ELOOP' && !(code === 'ENOENT' && options.create)) throw error;
      if (tries < 3) continue;
      if (code === 'ELOOP') throw new WorkspacePathError('TOO_MANY_LINKS', `'${path}' kept changing into a symbolic link while it was opened`, path);
      throw new WorkspacePathError('FILE_NOT_FOUND', `'${path}': its directory kept being removed while the file was written`, path);
    } finally {
      await placed.release();
    }
  }
};

/** Opens a regular file to read, never through a link (O_NONBLOCK: a FIFO answers at once instead of waiting for a writer). */
const openRegular = async (placed: Placed, path: string): Promise<FileHandle> => {
  let handle: FileHandle;
  try {
    handle = await open(placed.dir.at(placed.name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') throw new WorkspacePathError('FILE_NOT_FOUND', `no file '${path}' in the workspace`, path);
    throw error;
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new WorkspacePathError('NOT_A_FILE', `'${path}' is not a regular file`, path);
  }
  return handle;
};

/** A file's bytes (none when it is larger than `maxBytes`: only its size), and the real path it was read at. */
export const readWorkspaceFile = (workspace: string | undefined, path: string, maxBytes: number): Promise<{ path: string; size: number; data?: Buffer }> =>
  withPlaced(workspace, path, { create: false, followLast: true }, async (placed) => {
    const handle = await openRegular(placed, path);
    try {
      const { size } = await handle.stat();
      if (size > maxBytes) return { path: placed.path, size };
      const data = await handle.readFile();
      return { path: placed.path, size: data.length, data };
    } finally {
      await handle.close();
    }
  });

/** Whether anything (a link included) has the placed name. */
const taken = async (placed: Placed): Promise<boolean> => {
  try {
    await lstat(placed.dir.at(placed.name));
    return true;
  } catch (error) {
    if (errnoOf(error) === 'ENOENT') return false;
    throw error;
  }
};

/** Fills a temp file beside the placed name, flushes it, then renames it over the name: a reader never sees half a file. */
const replaceAtomically = async (placed: Placed, path: string, fill: (handle: FileHandle) => Promise<void>): Promise<void> => {
  const temp = placed.dir.at(`.${placed.name}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o666);
  try {
    try {
      await fill(handle);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, placed.dir.at(placed.name));
  } catch (error) {
    await rm(temp, { force: true });
    if (errnoOf(error) === 'EISDIR' || errnoOf(error) === 'ENOTEMPTY') throw new WorkspacePathError('NOT_A_FILE', `'${path}' is a directory, not a file`, path);
    throw error;
  }
};

/** Writes (or appends: the old content and the new, as one new file) atomically; answers the real path written. */
export const writeWorkspaceFile = (workspace: string | undefined, path: string, data: Buffer, append: boolean): Promise<string> =>
  withPlaced(workspace, path, { create: true, followLast: true }, async (placed) => {
    let before: Buffer | undefined;
    if (append && (await taken(placed))) {
      const handle = await openRegular(placed, path);
      before = await handle.readFile().finally(() => handle.close());
    }
    await replaceAtomically(placed, path, async (handle) => {
      if (before !== undefined) await handle.write(before);
      await handle.write(data);
    });
    return placed.path;
  });

const refuseTaken = async (placed: Placed, path: string, overwrite: boolean): Promise<void> => {
  if (!overwrite && (await taken(placed))) throw new WorkspacePathError('FILE_EXISTS', `'${path}' already exists: set "overwrite": true to replace it`, path);
};

/** Copies what `from` holds into `to` (file streams would keep the handles from closing until they end). */
const copyBytes = async (from: FileHandle, to: FileHandle): Promise<void> => {
  const buffer = Buffer.allocUnsafe(1 << 16);
  for (let position = 0; ; ) {
    const { bytesRead } = await from.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    await to.write(buffer, 0, bytesRead);
    position += bytesRead;
  }
};

/** Copies a file through a temp file and a rename (the destination is never half-written); answers both real paths. */
export const copyWorkspaceFile = (workspace: string | undefined, source: string, dest: string, overwrite: boolean): Promise<[string, string]> =>
  withPlaced(workspace, source, { create: false, followLast: true }, async (from) => {
    const input = await openRegular(from, source);
    try {
      return await withPlaced(workspace, dest, { create: true, followLast: true }, async (to) => {
        await refuseTaken(to, dest, overwrite);
        await replaceAtomically(to, dest, (handle) => copyBytes(input, handle));
        return [from.path, to.path];
      });
    } finally {
      await input.close();
    }
  });

/** Moves a file (a link moves as itself, not what it names) by rename; answers both real paths. */
export const moveWorkspaceFile = (workspace: string | undefined, source: string, dest: string, overwrite: boolean): Promise<[string, string]> =>
  withPlaced(workspace, source, { create: false, followLast: false }, async (from) => {
    const info = await lstat(from.dir.at(from.name)).catch(() => undefined);
    if (info === undefined) throw new WorkspacePathError('FILE_NOT_FOUND', `no file '${source}' in the workspace`, source);
    if (info.isDirectory()) throw new WorkspacePathError('NOT_A_FILE', `'${source}' is not a regular file`, source);
    return withPlaced(workspace, dest, { create: true, followLast: true }, async (to) => {
      await refuseTaken(to, dest, overwrite);
      try {
        await rename(from.dir.at(from.name), to.dir.at(to.name));
      } catch (error) {
        if (errnoOf(error) === 'ENOENT') throw new WorkspacePathError('FILE_NOT_FOUND', `no file '${source}' in the workspace`, source);
        if (errnoOf(error) === 'EISDIR' || errnoOf(error) === 'ENOTEMPTY') throw new WorkspacePathError('NOT_A_FILE', `'${dest}' is a directory`, dest);
        throw error;
      }
      return [from.path, to.path];
    });
  });

/** Deletes a file (a link itself, not what it names); a file already gone counts as deleted. Answers the real path and whether it existed. */
export const deleteWorkspaceFile = async (workspace: string | undefined, path: string): Promise<{ path: string; existed: boolean }> => {
  try {
    return await withPlaced(workspace, path, { create: false, followLast: false }, async (placed) => {
      const info = await lstat(placed.dir.at(placed.name)).catch(() => undefined);
      if (info?.isDirectory()) throw new WorkspacePathError('NOT_A_FILE', `'${path}' is not a regular file`, path);
      if (info !== undefined) await unlink(placed.dir.at(placed.name)).catch((error: unknown) => errnoOf(error) === 'ENOENT' || Promise.reject(error));
      return { path: placed.path, existed: info !== undefined };
    });
  } catch (error) {
    // A directory on the way is missing: so is the file.
    if (error instanceof WorkspacePathError && error.code === 'FILE_NOT_FOUND') return { path: resolve(workspace as string, path), existed: false };
    throw error;
  }
};
