import { constants, existsSync } from 'node:fs';
import { type FileHandle, lstat, mkdir, open, readlink, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ConfigurationError } from '../core/index.ts';
import { NO_WORKSPACE, WorkspacePathError } from './workspace.ts';

/**
 * Where a file node's path lands, found without ever following a link the kernel resolves for us: each
 * directory is opened from the one before it with O_NOFOLLOW, a symbolic link is read and followed here
 * (refused if it leads out), and the file is then named through its directory's descriptor
 * (`/proc/self/fd/N/name`, the openat of a language that has none). A directory swapped for a link
 * after it was checked cannot redirect the open, write, rename or unlink that follows: they start from
 * the directory that was opened, not from its path again.
 */

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;
/** As the kernel's own limit (ELOOP): a loop of links, or links that kept changing while the path was walked. */
const MAX_LINKS = 40;

/** Linux names an open directory's entries through its descriptor; elsewhere (macOS) each step goes by path again. */
const BY_DESCRIPTOR = process.platform === 'linux' && existsSync('/proc/self/fd');

/** A directory of the workspace, held open. */
export interface WorkspaceDir {
  /** Its real path when it was opened (for messages and outputs). */
  readonly path: string;
  /** A path that reaches `name` in this very directory, whatever has been renamed or swapped above it since. */
  at(name: string): string;
}

/** A node's path, resolved: a directory held open and a name in it (`name` is no link unless the last one was not followed). */
export interface Placed {
  readonly dir: WorkspaceDir;
  readonly name: string;
  /** The real path it stood at when resolved (what outputs show). */
  readonly path: string;
  /** Closes the directory. */
  release(): Promise<void>;
}

interface OpenDir extends WorkspaceDir {
  readonly handle: FileHandle;
}

const openDir = async (path: string, at: string): Promise<OpenDir> => {
  const handle = await open(at, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  return { handle, path, at: (name) => (BY_DESCRIPTOR ? `/proc/self/fd/${handle.fd}/${name}` : join(path, name)) };
};

const errnoOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** What a link holds, or undefined when `path` is no link (or nothing). */
const linkAt = async (path: string): Promise<string | undefined> => {
  try {
    return await readlink(path);
  } catch (error) {
    if (errnoOf(error) === 'EINVAL' || errnoOf(error) === 'ENOENT') return undefined;
    throw error;
  }
};

const insideRoot = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

export interface PlaceOptions {
  /** Make the missing directories on the way (a write's parents). */
  readonly create: boolean;
  /** Follow a link that is the last component (to read or write what it names); not to delete or move the link itself. */
  readonly followLast: boolean;
}

/**
 * Resolves a node's path in the workspace: relative paths from the workspace, `..` and absolute paths
 * lexically first (refused if they leave it), then component by component as described above. The
 * caller opens `placed.dir.at(placed.name)` with O_NOFOLLOW and releases `placed`.
 */
export const placeInWorkspace = async (workspace: string | undefined, path: string, options: PlaceOptions): Promise<Placed> => {
  if (workspace === undefined) throw new ConfigurationError(NO_WORKSPACE);
  const root = await realpath(workspace);
  const outside = () =>
    new WorkspacePathError('PATH_OUTSIDE_WORKSPACE', `'${path}' is outside the workspace ${root}: file nodes read and write only under it`, path);
  const target = resolve(root, path);
  if (!insideRoot(root, target)) throw outside();

  const todo = relative(root, target).split(sep);
  const stack: OpenDir[] = [await openDir(root, root)];
  const top = (): OpenDir => stack[stack.length - 1] as OpenDir;
  const unwind = async (keep: number): Promise<void> => {
    while (stack.length > keep) await (stack.pop() as OpenDir).handle.close();
  };
  let links = 0;
  const followed = (): void => {
    links += 1;
    if (links > MAX_LINKS)
      throw new WorkspacePathError(
        'TOO_MANY_LINKS',
        `'${path}' leads through more than ${MAX_LINKS} symbolic links (a loop, or links that kept changing)`,
        path,
      );
  };
  try {
    while (todo.length > 0) {
      const name = todo.shift() as string;
      if (name === '' || name === '.') continue;
      if (name === '..') {
        if (stack.length === 1) throw outside();
        await unwind(stack.length - 1);
        continue;
      }
      const last = !todo.some((rest) => rest !== '' && rest !== '.');
      const link = last && !options.followLast ? undefined : await linkAt(top().at(name));
      if (link !== undefined) {
        followed();
        if (isAbsolute(link)) {
          const real = resolve(link);
          if (!insideRoot(root, real)) throw outside();
          await unwind(1);
          todo.unshift(...relative(root, real).split(sep));
        } else {
          todo.unshift(...link.split('/'));
        }
        continue;
      }
      if (last) {
        const dir = top();
        stack.pop();
        await unwind(0);
        return { dir, name, path: join(dir.path, name), release: () => dir.handle.close() };
      }
      const next = await openChild(top(), name, options.create, path);
      if (next === 'link') {
        // It changed (into a link, most likely) between the look and the open: look again.
        followed();
        todo.unshift(name);
      } else {
        stack.push(next);
      }
    }
    throw new WorkspacePathError('NOT_A_FILE', `'${path}' is a directory, not a file`, path);
  } catch (error) {
    await unwind(0);
    throw error;
  }
};

/** Opens a directory inside `parent` without following a link ('link' when one is there), making it if asked. */
const openChild = async (parent: OpenDir, name: string, create: boolean, path: string): Promise<OpenDir | 'link'> => {
  for (let tries = 0; ; tries += 1) {
    try {
      return await openDir(join(parent.path, name), parent.at(name));
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ELOOP') return 'link';
      if (code === 'ENOTDIR') {
        // A link is ELOOP on Linux, but ENOTDIR where O_DIRECTORY is checked first; a file is a file; anything else changed meanwhile.
        const info = await lstat(parent.at(name)).catch(() => undefined);
        if (info?.isFile()) throw new WorkspacePathError('NOT_A_FILE', `'${path}': '${name}' is a file, not a directory`, path);
        return 'link';
      }
      if (code !== 'ENOENT') throw error;
      if (!create) throw new WorkspacePathError('FILE_NOT_FOUND', `no file '${path}' in the workspace`, path);
      if (tries >= 3) throw new WorkspacePathError('FILE_NOT_FOUND', `'${path}': the directory '${name}' kept disappearing as it was made`, path);
      await mkdir(parent.at(name)).catch((made: unknown) => {
        if (errnoOf(made) !== 'EEXIST') throw made;
      });
    }
  }
};
